"""Boot benchmark: K instances through the real daemons on RabbitMQ and PostgreSQL.

    .venv/bin/python benchmarks/boot_bench.py [--instances 200] [--cells 2]
                                              [--hosts-per-cell 5] [--agents hollow|one-per-host]
                                              [--batch 10] [--casts 2000] [--json FILE]
                                              [--record-backends none,database]
                                              [--queues quorum,durable,transient,quorum+]
                                              [--brokers node,cluster]
                                              [--pairs node:durable,cluster:quorum]
                                              [--profile-broker]
                                              [--via direct,api] [--keystone]

Starts a deployment of C cells x H fake hosts, served by one hollow compute
agent per cell (``[compute] hosted_hosts = H``; ``--agents one-per-host``
runs a process per host instead) (``tests/support/deployment.py``:
the local launcher, a vhost per level, a PostgreSQL database per level plus
Placement, on the local servers or those named by ``CELLPLANE_TEST_*``),
then boots K instances twice through the API role (``cellplane_api.servers``,
what ``cellplane server create`` runs), from this process:

- ``single``: K requests of one instance, cast back to back;
- ``batch``: K/B multi-create requests of B instances.

For each it reports boots per second (first request cast to last instance
ACTIVE), the scheduling time per instance (median, p95: the super
conductor's ``schedule`` event of each instance, from receiving the request
to the instance written in its cell - ``select_destinations`` and the cell
write; a batch's time is divided by its size), and the claim conflicts the
scheduler met and its batch claims, with how many fell back to claiming
one instance at a time, and the time of each scheduler stage per run (median,
p95; single requests and multi-creates apart), all from its scheduling
records (or, with a record backend other than the database, from the
traces it then logs at DEBUG). It reports the CPU per boot of every cellplane process, and of
RabbitMQ and PostgreSQL beside them. In the same run it measures the
broker's raw cast rate: a plain oslo.messaging cast loop from this process
to a trivial RPC server on a vhost of its own, so the boot rate can be read
against what the broker and this CPU allow. Everything it created (daemons,
vhosts, databases) is removed at the end.

It ends: ``--instances`` more than the hosts hold (both scenarios boot K
each, and nothing is deleted in between) is refused before anything starts,
with the capacity (exit 2); a scenario whose instances end in ERROR, or in
which no instance became final for ``--stall-seconds``, stops the run with
what it saw, one line per failure reason (``160 instances NoValidHost: ...:
the hosts are full``), exit 1 (``benchmarks/progress.py``).

``--queues quorum,durable`` runs the whole measure once per queue setting
(``cellplane.rpc.options.QUEUE_SETTINGS``: ``quorum``, cellplane's default,
quorum queues for every queue; ``quorum+``, deploy/two-cell's, adds stable
reply names and stream fanouts; ``durable``, classic durable queues with
transient replies and fanouts; ``transient``, classic transient queues: the
``[oslo_messaging_rabbit]`` options of every daemon, of this process and of
the raw cast measure), each on a fresh deployment, and ends with a table of
the runs side by side, with the broker's CPU per boot (RabbitMQ's
``beam.smp`` processes on this machine): what each kind of queue costs.
Repeat settings to interleave them (``quorum,durable,quorum,durable``).

``--brokers node,cluster`` runs each queue setting on a RabbitMQ node of the
benchmark's own (``node``) and on a three-node cluster of its own
(``cluster``, every ``transport_url`` listing the three nodes), both made
by ``tests/support/rabbit_cluster.py`` alike (one Erlang scheduler per
node), started once and torn down at the end; the broker's CPU is then
their nodes' alone, not the machine's broker's, which other work shares.
Without ``--brokers`` the machine's broker is used. The table then has one
row per broker, queue setting and scenario.

``--via direct,api`` boots through the compute API as well, in the same
deployment and run (``cellplane-api``, ``--api-workers`` processes): each
scenario through each path in turn (``direct`` first for the single
requests, ``api`` first for the batches; each path boots one instance
before, unmeasured), so that both see one load on a shared machine.
Through the API each request is a ``POST /servers`` (a batch: one request
with ``min_count`` = ``max_count`` = B) and the boots are watched as a
user's tools watch them, by polling ``GET /servers/detail`` with
``changes-since`` and ``status=BUILD&status=ERROR``
(``benchmarks/compute_api_client.py``). Tokens are real with
``--keystone`` or when ``CELLPLANE_KEYSTONE_VENV`` names a Keystone venv (a
Keystone of the run's own, ``tests/support/keystone.py``; keystonemiddleware
validates them); else the API runs ``noauth2`` and the table says so. A
table then gives boots/s through each path and their ratio, the API
role's CPU per boot (today's: this process while it wrote and cast the
requests; the API's: its processes, workers included, from /proc, while
the POSTs were answered and while the polls were), and ``GET
/servers/detail?limit=1000`` over ``--list-servers`` servers of the
project in the C cells (booted up to that many first): the median and p95
of ``--list-calls`` calls and the API's CPU per call.

``--profile DIR`` records every daemon with py-spy over the idle measure
and over the boots (``benchmarks/daemon_profile.py``: one file of
collapsed stacks per daemon and phase, and ``python
benchmarks/daemon_profile.py DIR`` for the functions that took most of
each); the recording takes CPU of its own, so a profiled run's figures
are for finding where the time goes, not for comparing.

``--record-backends`` runs the whole measure once per scheduling-record
backend (``[scheduler] record_backend``: none, database, jsonlines), each on
a fresh deployment, and ends with a table of the two side by side: records
are written by a background thread, so the scheduling time and boot rate
should not move with them; the scheduler's CPU seconds show their cost.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import re
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

# Run as a script from the repository: the deployment helper lives in tests/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa
from oslo_config import cfg

from cellplane import config
from cellplane.context import new_context
from cellplane.db import engines
from cellplane.db.api.models import build_requests
from cellplane.db.cell.models import (
    instance_action_events,
    instance_actions,
    instance_faults,
    instances,
)
from cellplane.objects import flavors as api_flavors
from cellplane.rpc import options as rpc_options
from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport
from cellplane_api import servers
from compute_agent.virt.fake import FakeDriver, FakeSettings
from conductor.super.cell_writes import EVENT_SCHEDULE
from conductor.super.rpcapi import SuperConductorAPI

# isort: split
import broker_profile  # the sibling benchmarks/broker_profile.py
import compute_api_client  # the sibling benchmarks/compute_api_client.py
import daemon_profile  # the sibling benchmarks/daemon_profile.py
import machine as machine_facts  # the sibling benchmarks/machine.py
import oslo_messaging as messaging
import progress  # the sibling benchmarks/progress.py

from tests.support import backing_services
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.keystone import MEMBER_A, Keystone
from tests.support.keystone import VENV as KEYSTONE_VENV
from tests.support.private_engines import ERL_ARGS
from tests.support.rabbit_cluster import RabbitCluster

PROJECT = 'bench'
FLAVOR = ('bench.small', 1, 256, 1)
FLAVOR_ASKS = {'VCPU': FLAVOR[1], 'MEMORY_MB': FLAVOR[2], 'DISK_GB': FLAVOR[3]}
POLL_SECONDS = 0.25
DEADLINE_SECONDS = 600
STALL_SECONDS = 60.0
TRACE_MARK = 'scheduling trace '


def machine() -> str:
    return machine_facts.summary(f'oslo.messaging {_version("oslo.messaging")}')


def _version(package: str) -> str:
    from importlib.metadata import version
    try:
        return version(package)
    except Exception:  # noqa: BLE001 - only for the report
        return '?'


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float('nan')
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


# -- the broker's raw cast rate ---------------------------------------------------------

class _Counter:
    target = messaging.Target(version='1.0')

    def __init__(self, expected: int) -> None:
        self.count = 0
        self._expected = expected
        self._lock = threading.Lock()
        self.done = threading.Event()

    def tick(self, ctxt, n):
        with self._lock:
            self.count += 1
            if self.count >= self._expected:
                self.done.set()


def cast_rate(transport_url: str, casts: int) -> dict[str, float]:
    """Casts/s: client-side (all sent) and delivered (all handled by the server).

    With this process's ``[oslo_messaging_rabbit]`` settings: those of the run.
    """
    transport = get_transport(transport_url)
    counter = _Counter(casts)
    server = build_server(transport, topic='castbench', server='bench',
                          endpoints=[counter])
    server.start()
    client = messaging.get_rpc_client(transport, messaging.Target(topic='castbench'))
    try:
        client.cast({}, 'tick', n=-1)       # connections and queues made before timing
        while counter.count < 1:
            time.sleep(0.01)
        counter.count = 0
        started = time.perf_counter()
        for n in range(casts):
            client.cast({}, 'tick', n=n)
        sent = time.perf_counter()
        if not counter.done.wait(DEADLINE_SECONDS):
            raise RuntimeError(f'only {counter.count} of {casts} casts delivered')
        delivered = time.perf_counter()
    finally:
        server.stop()
        server.wait()
        transport.cleanup()
    return {'casts': casts, 'sent_per_second': casts / (sent - started),
            'delivered_per_second': casts / (delivered - started)}


# -- boots -----------------------------------------------------------------------------------

def host_capacity(fake_driver: dict) -> int:
    """Instances of the benchmark's flavor one fake host holds, from the inventory it reports."""
    inventory = FakeDriver(FakeSettings(**fake_driver)).get_inventory()
    return progress.per_host({rc: progress.Inventory(i.total, i.reserved, i.allocation_ratio)
                              for rc, i in inventory.items()}, FLAVOR_ASKS)


def fake_driver_of(args) -> dict:
    """The ``[fake_driver]`` options of every host of the run."""
    # Exact fit: every host holds exactly instances / hosts of the flavor.
    return ({'vcpus': args.instances // (args.cells * args.hosts_per_cell),
             'cpu_allocation_ratio': 1.0} if args.exact_fit else {})


def refuse_over_capacity(args, fake_driver: dict) -> str | None:
    """Why the run cannot fit its hosts (both scenarios together), or None."""
    hosts = args.cells * args.hosts_per_cell
    each = host_capacity(fake_driver)
    paths = len(args.via.split(','))
    runs = paths if args.exact_fit else 2 * paths
    booted = runs * args.instances + len(warmed(args.via.split(',')))
    listed = args.list_servers if 'api' in args.via.split(',') else 0
    if max(booted, listed) <= hosts * each:
        return None
    if listed > booted:
        return (f'--list-servers {listed}: {args.cells} cells x {args.hosts_per_cell} hosts '
                f'hold {hosts * each} of {FLAVOR[0]} ({each} per host); list fewer, or '
                f'use more hosts')
    return (f'--instances {args.instances} boots {booted} instances ('
            + ('single requests only' if args.exact_fit else
               f'{args.instances} as single requests, then {args.instances} in batches')
            + (f', through each of {paths} paths' if paths > 1 else '')
            + ('' if args.exact_fit else ', nothing deleted in between')
            + f'), but {args.cells} cells x {args.hosts_per_cell} hosts hold {hosts * each} '
            f'of {FLAVOR[0]} ({each} per host); use --instances '
            f'{(hosts * each - len(warmed(args.via.split(",")))) // runs} or fewer, '
            f'or more hosts')


class DirectPath:
    """Today's path: ``cellplane_api.servers.create`` in this process (what ``cellplane server
    create`` runs), the instances watched in the databases.

    Its API-role CPU is this process's (``time.process_time``).
    """

    via = 'direct'

    def __init__(self, deployment: Deployment, api_engine, conductor: SuperConductorAPI, *,
                 project: str) -> None:
        self.deployment = deployment
        self.api_engine = api_engine
        self.conductor = conductor
        self.project = project

    def cpu(self) -> float:
        return time.process_time()

    def submit(self, name: str, sizes: list[int]) -> list[str]:
        ctxt = new_context(user_id='bench', project_id=self.project)
        uuids: list[str] = []
        for i, count in enumerate(sizes):
            uuids += servers.create(self.api_engine, self.conductor, ctxt, name=f'{name}-{i}',
                                    flavor=FLAVOR[0], count=count, project_id=self.project,
                                    user_id='bench')
        return uuids

    def wait(self, uuids: list[str], watch: progress.Progress) -> dict[str, int]:
        # One connection per cell at a time: the benchmark's share of the budget.
        cell_engines = [engines.create_engine(self.deployment.databases[c], pool_size=1,
                                              max_overflow=0) for c in self.deployment.cells]
        try:
            return wait_final(cell_engines, self.api_engine, uuids, watch)
        finally:
            for engine in cell_engines:
                engine.dispose()

    def uuids(self, submitted: list[str]) -> list[str]:
        return submitted


class ApiPath:
    """Through ``cellplane-api`` over HTTP, as a user's tools: ``POST /servers`` (a batch is
    one request with ``min_count`` = ``max_count``), then ``GET /servers/detail`` polled
    (``compute_api_client.BootWatch``). Its CPU is the API daemon's, workers included.
    """

    via = 'api'

    def __init__(self, deployment: Deployment, client: compute_api_client.ComputeClient) -> None:
        self.deployment = deployment
        self.client = client

    def cpu(self) -> float:
        return process_tree_cpu(self.deployment.pid('api'))

    def submit(self, name: str, sizes: list[int]) -> compute_api_client.BootWatch:
        boots = compute_api_client.BootWatch(self.client, f'{name}-', sum(sizes))
        for i, count in enumerate(sizes):
            self.client.create(f'{name}-{i}', FLAVOR[0], count=count)
        return boots

    def wait(self, boots: compute_api_client.BootWatch,
             watch: progress.Progress) -> dict[str, int]:
        return boots.wait(watch, poll_seconds=POLL_SECONDS)

    def uuids(self, boots: compute_api_client.BootWatch) -> list[str]:
        return boots.ids()


def boot(deployment: Deployment, path: DirectPath | ApiPath, *, name: str,
         sizes: list[int], stall_seconds: float = STALL_SECONDS,
         capacity: int | None = None) -> dict:
    """Send the requests, wait until every instance is ACTIVE or ERROR; the figures.

    ``api_cpu_ms_*`` per boot: the API role's CPU while the requests were sent
    and while the boots were watched (``path.cpu``). Raises
    ``progress.BenchmarkStopped`` when instances end in ERROR or stop becoming
    final.
    """
    cpu_started = path.cpu()
    started = time.perf_counter()
    submitted = path.submit(f'{path.via}-{name}', sizes)
    cast_done = time.perf_counter()
    cpu_cast = path.cpu()
    states = path.wait(submitted, progress.Progress(
        sum(sizes), stall_seconds=stall_seconds, capacity_=capacity))
    finished = time.perf_counter()
    cpu_finished = path.cpu()
    uuids = path.uuids(submitted)
    per_instance = schedule_times(deployment, uuids)
    return {
        'scenario': name, 'via': path.via, 'instances': len(uuids), 'requests': len(sizes),
        'active': states.get('active', 0), 'error': states.get('error', 0),
        'seconds': finished - started, 'boots_per_second': len(uuids) / (finished - started),
        'cast_seconds': cast_done - started,
        'api_cpu_ms_send': 1000 * (cpu_cast - cpu_started) / len(uuids),
        'api_cpu_ms_watch': 1000 * (cpu_finished - cpu_cast) / len(uuids),
        'schedule_ms_median': statistics.median(per_instance) * 1000,
        'schedule_ms_p95': percentile(per_instance, 0.95) * 1000,
        **({'polls': submitted.polls} if path.via == 'api' else {}),
    }


def wait_final(cell_engines, api_engine, uuids: list[str], watch: progress.Progress, *,
               poll_seconds: float = POLL_SECONDS) -> dict[str, int]:
    """Poll until ``watch`` says every instance is final; ``{'active': n, 'error': m}``.

    Raises ``progress.BenchmarkStopped`` when instances ended in ERROR or
    stopped becoming final.
    """
    wanted = set(uuids)
    while True:
        seen = look(cell_engines, api_engine, wanted)
        if watch.update(seen):
            return {'active': seen.active, 'error': seen.error}
        time.sleep(poll_seconds)


def look(cell_engines, api_engine, wanted: set[str]) -> progress.Seen:
    """Instances ACTIVE in the cells, and in ERROR by reason: in a cell (its last fault) or
    failed before reaching one (its build request's fault, e.g. NoValidHost)."""
    active, errors = 0, {}
    for engine in cell_engines:
        with engine.connect() as conn:
            active += conn.execute(sa.select(sa.func.count()).where(
                instances.c.uuid.in_(wanted), instances.c.vm_state == 'active')).scalar()
            errored = conn.execute(sa.select(instances.c.uuid).where(
                instances.c.uuid.in_(wanted), instances.c.vm_state == 'error')
            ).scalars().all()
            if errored:
                last = {}
                for uuid, message in conn.execute(
                        sa.select(instance_faults.c.instance_uuid, instance_faults.c.message)
                        .where(instance_faults.c.instance_uuid.in_(errored))
                        .order_by(instance_faults.c.id)):
                    last[uuid] = message
                for uuid in errored:
                    reason = last.get(uuid, 'ERROR without a fault')
                    errors[reason] = errors.get(reason, 0) + 1
    with api_engine.connect() as conn:
        for (reason,) in conn.execute(
                sa.select(build_requests.c.fault_message)
                .where(build_requests.c.instance_uuid.in_(wanted),
                       build_requests.c.fault_message.is_not(None))):
            errors[reason] = errors.get(reason, 0) + 1
    return progress.Seen(active=active, errors=errors)


def schedule_times(deployment: Deployment, uuids: list[str]) -> list[float]:
    """Seconds of scheduling per instance, one value per request (a batch's divided by B).

    The super conductor's ``schedule`` event starts when it took the request
    and finishes when that instance was written in its cell; the instances of
    one request share the start, and the request's time is its last finish.
    """
    by_request: dict[datetime.datetime, list[datetime.datetime]] = {}
    for cell in deployment.cells:
        engine = engines.create_engine(deployment.databases[cell])
        try:
            with engine.connect() as conn:
                rows = conn.execute(
                    sa.select(instance_action_events.c.start_time,
                              instance_action_events.c.finish_time)
                    .join(instance_actions,
                          instance_actions.c.id == instance_action_events.c.action_id)
                    .where(instance_action_events.c.event == EVENT_SCHEDULE,
                           instance_actions.c.instance_uuid.in_(uuids))).all()
        finally:
            engine.dispose()
        for start, finish in rows:
            by_request.setdefault(start, []).append(finish)
    return [(max(finishes) - start).total_seconds() / len(finishes)
            for start, finishes in by_request.items()]


def _scheduler_runs(deployment: Deployment) -> list[dict]:
    """Every scheduler run as ``{num_instances, instances, stage_ms, batch_claim}``.

    From the scheduling records in the API database when the deployment
    keeps them there (as it does by default: what an operator runs), else
    from the traces the schedulers log at DEBUG (the deployment turns that
    on only then: logging a trace costs CPU the records do not).
    """
    if deployment.record_backend in (None, 'database'):
        engine = engines.create_engine(deployment.databases['api'])
        try:
            with engine.connect() as conn:
                bodies = conn.execute(sa.text('SELECT record FROM scheduling_records')
                                      ).scalars().all()
        finally:
            engine.dispose()
        return [{'num_instances': len(b['instance_uuids']), 'instances': b['instances'],
                 'stage_ms': b.get('stage_ms') or {},
                 'batch_claim': b.get('placement', {}).get('batch_claim', '')}
                for b in (json.loads(b) if isinstance(b, str) else b for b in bodies)]
    runs = []
    decoder = json.JSONDecoder()
    for line in '\n'.join(deployment.scheduler_logs()).splitlines():
        at = line.find(TRACE_MARK)
        if at >= 0:
            # oslo.log appends its debug suffix ({{(pid=...) ...}}) after the JSON.
            trace, _ = decoder.raw_decode(line, at + len(TRACE_MARK))
            runs.append(trace)
    return runs


def claim_conflicts(deployment: Deployment) -> dict:
    """From every scheduler run: refused claims, batch claims, and each stage's time.

    ``stages``: for single-instance runs and multi-create runs apart, each
    scheduler stage (``stage_ms``: Placement's candidates, host states,
    filters, weighers, claims) as median and p95 milliseconds per run.
    """
    conflicts = batched = fell_back = 0
    stage_samples: dict[str, dict[str, list[float]]] = {'single': {}, 'batch': {}}
    runs = _scheduler_runs(deployment)
    for run_ in runs:
        conflicts += sum(1 for instance in run_['instances']
                         for claim in instance['claims'] if claim['outcome'] == 'conflict')
        batched += bool(run_.get('batch_claim'))
        fell_back += run_.get('batch_claim') == 'fell_back'
        kind = stage_samples['single' if run_['num_instances'] == 1 else 'batch']
        stages = run_.get('stage_ms') or {}
        for stage, ms in stages.items():
            kind.setdefault(stage, []).append(ms)
        kind.setdefault('all stages', []).append(sum(stages.values()))
    return {'scheduler_runs': len(runs), 'claim_conflicts': conflicts,
            'batch_claims': batched, 'batch_claims_fell_back': fell_back,
            'stages': {kind: {stage: {'median': statistics.median(ms),
                                      'p95': percentile(ms, 0.95)}
                              for stage, ms in samples.items()}
                       for kind, samples in stage_samples.items() if samples}}


# -- where the CPU went ---------------------------------------------------------------------------

def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])      # utime + stime


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / 'stat').read_text().rsplit(')', 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def process_tree_cpu(pid: int) -> float:
    """CPU seconds used so far by process ``pid`` and its live children (the HTTP workers)."""
    return sum(_cpu_ticks(p) for p in (pid, *_children(pid))) / os.sysconf('SC_CLK_TCK')


def _children_cpu() -> float:
    """CPU seconds of this process's children waited for so far (the launcher's runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def daemon_cpu(deployment: Deployment) -> dict[str, float]:
    """CPU seconds used so far by each daemon (with its live children: the HTTP workers)."""
    return {pid_file.stem: process_tree_cpu(json.loads(pid_file.read_text())['pid'])
            for pid_file in deployment.run_dir.glob('*.pid')}


# -- where the start-up went ---------------------------------------------------------------------

_LOG_TIME = re.compile(r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) ')
_MARKER = re.compile(r'^==== cellplane-launch: \S+ starting at (\S+) ====$', re.MULTILINE)


def _last_start(path: Path) -> tuple[float | None, list[str]]:
    """When the launcher last started the daemon of log ``path`` (None: never), and its lines since."""
    text = path.read_text(errors='replace')
    markers = list(_MARKER.finditer(text))
    if not markers:
        return None, text.splitlines()
    last = markers[-1]
    spawned = datetime.datetime.strptime(last.group(1), '%Y-%m-%dT%H:%M:%S%z').timestamp()
    return spawned, text[last.end():].splitlines()


def _first_time(lines: list[str], pattern: re.Pattern) -> float | None:
    """The time (time.time()) of the first oslo.log line of ``lines`` that matches ``pattern``."""
    for line in lines:
        stamp = _LOG_TIME.match(line)
        if stamp and pattern.search(line):
            return (time.mktime(time.strptime(stamp.group(1), '%Y-%m-%d %H:%M:%S'))
                    + int(stamp.group(2)) / 1000)
    return None


def startup_timeline(deployment: Deployment) -> dict[str, float]:
    """Seconds from ``create()``'s start to each step of the start-up, from its logs and timeline.

    The launcher starts the daemons in stages (Placement; cell conductors;
    compute agents; scheduler and super conductor), each when the one
    before serves; an agent's first report brings all its hosts in sync
    with Placement, then sends their node records to its cell conductor.
    A step of several daemons is given when the last of them got there.
    """
    began = deployment.timeline['began']
    groups: dict[str, list[Path]] = {}
    for path in sorted(deployment.run_dir.glob('*.log')):
        group = ('placement' if path.stem == 'placement'
                 else 'cell conductors' if path.stem.startswith('conductor-')
                 else 'compute agents' if path.stem.startswith('compute-')
                 else 'scheduler and super conductor'
                 if path.stem.startswith('scheduler') or path.stem == 'super-conductor'
                 else None)
        if group is not None:
            groups.setdefault(group, []).append(path)
    steps = {'vhosts and databases': deployment.timeline['vhosts and databases'] - began}
    serving = re.compile(r'serving topic \S+ as ')
    in_sync = re.compile('in sync with Placement')
    for group, paths in groups.items():
        starts = [_last_start(path) for path in paths]
        spawned = [at for at, _ in starts if at is not None]
        if spawned:
            steps[f'{group} spawned'] = max(spawned) - began
        served = [_first_time(lines, serving) for _, lines in starts]
        if served and None not in served:
            steps[f'{group} serving'] = max(served) - began
        if group == 'compute agents':
            synced = [_first_time(lines, in_sync) for _, lines in starts]
            synced = [at for at in synced if at is not None]
            if synced:
                steps['first agent in sync with Placement'] = min(synced) - began
                steps['last agent in sync with Placement'] = max(synced) - began
    for step in ('daemons serving', 'hosts registered', 'scheduler read every host'):
        if step in deployment.timeline:
            steps[step] = deployment.timeline[step] - began
    return dict(sorted(steps.items(), key=lambda kv: kv[1]))


IDLE_SECONDS = 20


class ConnectionWatch:
    """The PostgreSQL connections held during the boots: the peak per process and in all.

    Sampled from ``pg_stat_activity`` every ``every`` seconds by a thread:
    per ``application_name`` (each daemon sets its own) over the
    deployment's databases, their sum, and the server's client connections
    of every user (other work on a shared server included).
    """

    def __init__(self, deployment: Deployment, every: float = 0.5) -> None:
        self._databases = [sa.engine.make_url(url).database
                           for url in deployment.databases.values()]
        self._engine = engines.create_engine(deployment.databases['api'], pool_size=1,
                                             max_overflow=0)
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='connection-watch', daemon=True)
        self.peak: dict[str, int] = {}
        self.peak_ours = self.peak_server = 0
        self.max_connections = 0
        self.failed_samples = 0

    def __enter__(self) -> 'ConnectionWatch':
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._engine.dispose()

    def sample(self) -> None:
        with self._engine.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT coalesce(nullif(application_name, ''), '?'), count(*) "
                'FROM pg_stat_activity WHERE datname = ANY(:databases) GROUP BY 1'),
                {'databases': self._databases}).all()
            server = conn.execute(sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
            ).scalar()
            self.max_connections = int(conn.exec_driver_sql('SHOW max_connections').scalar())
        for name, n in rows:
            self.peak[name] = max(self.peak.get(name, 0), n)
        self.peak_ours = max(self.peak_ours, sum(n for _, n in rows))
        self.peak_server = max(self.peak_server, server)

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self.sample()
            except sa.exc.SQLAlchemyError:
                self.failed_samples += 1     # the server full, most likely: counted, said

    def report(self) -> dict:
        return {'peak_by_process': dict(sorted(self.peak.items())),
                'peak_ours': self.peak_ours, 'peak_server': self.peak_server,
                'max_connections': self.max_connections,
                'failed_samples': self.failed_samples}


class _SingleOnly(Exception):
    """The exact-fit run boots once (single requests): there is no room for a second."""


def over_capacity(deployment: Deployment) -> dict:
    """Providers whose VCPU usage passed their capacity, read from Placement after the boots."""
    placement = deployment.placement()
    over, full = [], 0
    for provider in placement.list_providers():
        resp = placement.transport.request(
            'GET', f'/resource_providers/{provider.uuid}/usages')
        used = resp.body['usages'].get('VCPU', 0)
        inventory = placement.get_inventory(provider.uuid).get('VCPU')
        capacity = int((inventory.total - inventory.reserved) * inventory.allocation_ratio)
        if used > capacity:
            over.append(f'{provider.name} ({used} of {capacity})')
        full += used == capacity
    return {'providers_over_capacity': over, 'providers_full': full}


def idle_cpu(deployment: Deployment, seconds: float) -> float:
    """Percent of one core all the daemons use together while nothing is asked of them."""
    before = daemon_cpu(deployment)
    time.sleep(seconds)
    after = daemon_cpu(deployment)
    return 100 * sum(after[n] - before.get(n, 0.0) for n in after) / seconds


def agent_rss_mib(deployment: Deployment) -> float:
    """Resident memory of all the compute agent processes, MiB."""
    total_kib = 0
    for pid_file in deployment.run_dir.glob('compute-*.pid'):
        pid = json.loads(pid_file.read_text())['pid']
        for line in Path(f'/proc/{pid}/status').read_text().splitlines():
            if line.startswith('VmRSS:'):
                total_kib += int(line.split()[1])
    return total_kib / 1024


def _service_cpu(comm: str) -> float | None:
    """CPU seconds used so far by the processes named ``comm`` here, with their reaped children.

    A PostgreSQL backend that exited is counted in its postmaster's
    children's time (cutime, cstime); None when no such process is seen.
    """
    hertz = os.sysconf('SC_CLK_TCK')
    ticks, seen = 0, False
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                if (entry / 'comm').read_text().strip() != comm:
                    continue
                fields = (entry / 'stat').read_text().rsplit(')', 1)[1].split()
            except OSError:
                continue
            seen = True
            ticks += sum(int(f) for f in fields[11:15])   # utime stime cutime cstime
    return ticks / hertz if seen else None


def broker_cpu() -> float | None:
    """CPU seconds used so far by RabbitMQ's Erlang VMs on this machine (None: none seen here)."""
    return _service_cpu('beam.smp')


def cluster_cpu(cluster: RabbitCluster):
    """A measure of the CPU seconds used so far by the cluster's nodes (their process trees)."""
    return lambda: sum(node_cpu(cluster).values())


def node_cpu(cluster: RabbitCluster | None) -> dict[str, float]:
    """CPU seconds used so far by each node of the run's own broker (its process tree)."""
    if cluster is None:
        return {}
    return {n.node: process_tree_cpu(n.process.pid) for n in cluster.nodes
            if n.process is not None}


def database_cpu() -> float | None:
    """CPU seconds used so far by PostgreSQL on this machine (None: not running here)."""
    return _service_cpu('postgres')


def cpu_by_role(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    roles: dict[str, float] = {}
    for name, seconds in after.items():
        role = 'compute agents' if name.startswith('compute-') else \
            'cell conductors' if name.startswith('conductor-') else \
            'scheduler' if name.startswith('scheduler') else name   # every worker
        roles[role] = roles.get(role, 0.0) + seconds - before.get(name, 0.0)
    return dict(sorted(roles.items(), key=lambda kv: -kv[1]))


# -- the run -----------------------------------------------------------------------------------

def records_written(deployment: Deployment) -> int | None:
    """How many scheduling records the deployment's scheduler wrote (None: not kept)."""
    if deployment.record_backend == 'jsonlines':
        files = sorted(deployment.records_file.parent.glob(deployment.records_file.name + '*'))
        return sum(len(f.read_text().splitlines()) for f in files)
    if deployment.record_backend in (None, 'database'):
        engine = engines.create_engine(deployment.databases['api'])
        try:
            with engine.connect() as conn:
                return conn.exec_driver_sql('SELECT count(*) FROM scheduling_records').scalar()
        finally:
            engine.dispose()
    return None


def warmed(via: list[str]) -> list[str]:
    """The paths that boot one instance before the measure: all of them when compared."""
    return via if len(via) > 1 else []


def placed(results: list[dict]) -> int:
    """Instances the scenarios so far left ACTIVE (nothing is deleted between them)."""
    return sum(r['active'] for r in results)


def keystone_wanted(args) -> bool:
    """Real tokens for ``--via api``: asked (``--keystone``) or a Keystone venv named."""
    return 'api' in args.via.split(',') and (
        args.keystone or 'CELLPLANE_KEYSTONE_VENV' in os.environ)


@contextlib.contextmanager
def keystone_of(args, workdir: Path):
    """A Keystone of the run's own (``tests/support/keystone.py``) when wanted, else None."""
    if not keystone_wanted(args):
        yield None
        return
    server = Keystone(workdir / 'keystone', KEYSTONE_VENV)
    (workdir / 'keystone').mkdir()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def api_caller(keystone: Keystone | None) -> tuple[str, str]:
    """The token the API path sends and the project it (and the direct path) boots into."""
    if keystone is None:
        return f'{PROJECT}:{PROJECT}', PROJECT    # noauth2: "user:project"
    return keystone.token(MEMBER_A), keystone.project_id(MEMBER_A)


def list_detail(paths: dict, servers_now: int, args, *, capacity: int) -> dict:
    """``GET /servers/detail?limit=1000`` as the project's member, ``--list-calls`` times, over
    ``--list-servers`` servers (booted by the direct path up to that many first).

    Each call's time is the client's, from sending to the whole body read; the
    API's CPU per call is its daemon's over all the calls.
    """
    more = args.list_servers - servers_now
    if more > capacity:
        raise progress.BenchmarkStopped(f'{more} more servers are needed for the list, '
                                        f'the hosts hold {capacity} more')
    if more > 0:
        direct = paths['direct']
        sizes = [servers.MAX_COUNT // 10] * (more // (servers.MAX_COUNT // 10))
        if more % (servers.MAX_COUNT // 10):
            sizes.append(more % (servers.MAX_COUNT // 10))
        uuids = direct.submit('fill', sizes)
        direct.wait(uuids, progress.Progress(len(uuids), stall_seconds=args.stall_seconds,
                                             capacity_=capacity))
    api = paths['api']
    query = {'limit': compute_api_client.LIST_LIMIT}
    listed = len(api.client.call('GET', '/v2.1/servers/detail', params=query).json()['servers'])
    seconds = []
    cpu_before = api.cpu()
    for _ in range(args.list_calls):
        began = time.perf_counter()
        api.client.call('GET', '/v2.1/servers/detail', params=query)
        seconds.append(time.perf_counter() - began)
    cpu = api.cpu() - cpu_before
    return {'servers': max(servers_now, args.list_servers), 'listed': listed,
            'calls': args.list_calls, 'ms_median': 1000 * statistics.median(seconds),
            'ms_p95': 1000 * percentile(seconds, 0.95),
            'api_cpu_ms_per_call': 1000 * cpu / args.list_calls}


def ready_seconds(hosts: int) -> float:
    """How long the deployment may take to register every host: the tests' wait, and more for many.

    A host's first report is a few Placement writes (about 20 ms of CPU,
    client and server, on this machine), so thousands of them take minutes
    on a busy machine; the time they took is reported, not hidden.
    """
    return max(EVENTUALLY_SECONDS, 0.12 * hosts)


def run(args, record_backend: str | None = None, queues: str = 'quorum',
        cluster: RabbitCluster | None = None) -> dict:
    rabbit = backing_services.find_rabbit() if cluster is None else cluster.server()
    measure_broker = broker_cpu if cluster is None else cluster_cpu(cluster)
    postgres = backing_services.find_postgres()
    cells = range(1, args.cells + 1)
    fake_driver = fake_driver_of(args)
    capacity = args.cells * args.hosts_per_cell * host_capacity(fake_driver)
    if args.agents == 'hollow':
        computes = [ComputePlan(f'cell{c}-hollow', f'cell{c}', fake_driver=fake_driver,
                                hosted_hosts=args.hosts_per_cell) for c in cells]
    else:
        computes = [ComputePlan(f'cell{c}-host{h}', f'cell{c}', fake_driver=fake_driver)
                    for c in cells for h in range(1, args.hosts_per_cell + 1)]
    # The box is shared: the load when we began says how far to trust the figures.
    load_before = os.getloadavg()
    config.load([], prog='boot-bench', setup_logging=False,
                registrars=[rpc_options.register_opts])
    # This process (API role, raw casts) declares queues as the daemons do.
    for name, value in rpc_options.QUEUE_SETTINGS[queues].items():
        cfg.CONF.set_override(name, value, group=rpc_options.RABBIT_GROUP)
    via = args.via.split(',')
    with tempfile.TemporaryDirectory(prefix='cellplane-boot-bench-') as workdir, \
            keystone_of(args, Path(workdir)) as keystone:
        deployment = Deployment(Path(workdir), rabbit, postgres, computes,
                                trace_scheduling=record_backend not in (None, 'database'),
                                rpc_handler_threads=args.handler_threads,
                                default_intervals=True,
                                scheduler_workers=args.scheduler_workers,
                                record_backend=record_backend,
                                queues=queues, compute_api='api' in via, keystone=keystone,
                                api_workers=args.api_workers,
                                ready_seconds=ready_seconds(args.cells * args.hosts_per_cell))
        cast_vhost = None
        exact = None
        listing = None
        transport = api_engine = None
        started = time.perf_counter()
        try:
            broker_start, database_start = measure_broker(), database_cpu()
            launcher_start = _children_cpu()
            deployment.create()
            startup = time.perf_counter() - started
            startup_cpu = cpu_by_role({}, daemon_cpu(deployment))
            startup_cpu['launcher (db sync, cell mapping)'] = _children_cpu() - launcher_start
            broker_up, database_up = measure_broker(), database_cpu()
            if broker_start is not None and broker_up is not None:
                startup_cpu['RabbitMQ (whole server)'] = broker_up - broker_start
            if database_start is not None and database_up is not None:
                startup_cpu['PostgreSQL (whole server)'] = database_up - database_start
            timeline = startup_timeline(deployment)
            if args.profile_broker and cluster is not None:
                broker_profile.start(cluster.nodes)
            broker_idle_before = node_cpu(cluster)
            with daemon_profile.profiled(deployment, args.profile, 'idle'):
                idle = idle_cpu(deployment, IDLE_SECONDS)
            broker_idle = {node: 100 * (seconds - broker_idle_before.get(node, 0.0))
                           / IDLE_SECONDS for node, seconds in node_cpu(cluster).items()}
            idle_profile = (broker_profile.report(cluster.nodes)
                            if args.profile_broker and cluster is not None else None)
            rss = agent_rss_mib(deployment)
            api_engine = engines.create_engine(deployment.databases['api'])
            api_flavors.create(api_engine, name=FLAVOR[0], vcpus=FLAVOR[1],
                               memory_mb=FLAVOR[2], root_gb=FLAVOR[3], flavorid=FLAVOR[0])
            transport = get_transport(deployment.transport_url('top'))
            conductor = SuperConductorAPI(transport)
            # The servers of both paths are one project's: the API's caller's.
            token, project = api_caller(keystone)
            paths = {'direct': DirectPath(deployment, api_engine, conductor, project=project)}
            if 'api' in via:
                paths['api'] = ApiPath(deployment, compute_api_client.ComputeClient(
                    deployment.compute_api_url, token))
            results = []
            cpu_before = daemon_cpu(deployment)
            broker_before, database_before = measure_broker(), database_cpu()
            broker_before_by_node = node_cpu(cluster)
            if args.profile_broker and cluster is not None:
                broker_profile.start(cluster.nodes)
            this_before = time.process_time()
            watch = ConnectionWatch(deployment).__enter__()
            spies = daemon_profile.profiled(deployment, args.profile, 'boots')
            spies.__enter__()
            try:
                # Compared, each path boots one first: connections, caches, the
                # first Keystone validation are not what is measured.
                for path in warmed(via):
                    warm = paths[path].submit(f'{path}-warmup', [1])
                    paths[path].wait(warm, progress.Progress(
                        1, stall_seconds=args.stall_seconds))
                capacity -= len(warmed(via))
                # Each scenario through each path in turn (the order reversed for
                # the batches): one load, and fuller hosts, for both.
                for path in via:
                    results.append(boot(deployment, paths[path], name='single',
                                        sizes=[1] * args.instances,
                                        capacity=capacity - placed(results),
                                        stall_seconds=args.stall_seconds))
                if args.exact_fit:
                    exact = over_capacity(deployment)
                    raise _SingleOnly
                batches = [args.batch] * (args.instances // args.batch)
                if args.instances % args.batch:
                    batches.append(args.instances % args.batch)
                for path in reversed(via):
                    results.append(boot(deployment, paths[path], name='batch',
                                        sizes=batches, stall_seconds=args.stall_seconds,
                                        capacity=capacity - placed(results)))
            except _SingleOnly:
                pass
            finally:
                spies.__exit__(None, None, None)
                watch.__exit__()
            cpu = cpu_by_role(cpu_before, daemon_cpu(deployment))
            cpu['this process (API role, polling)'] = time.process_time() - this_before
            broker_after, database_after = measure_broker(), database_cpu()
            broker_after_by_node = node_cpu(cluster)
            profile = (broker_profile.report(cluster.nodes)
                       if args.profile_broker and cluster is not None else None)
            broker_seconds = (None if broker_before is None or broker_after is None
                              else broker_after - broker_before)
            database_seconds = (None if database_before is None or database_after is None
                                else database_after - database_before)
            # Records are written just after each reply: give the writer a moment.
            time.sleep(1.0)
            conflicts = claim_conflicts(deployment)
            written = records_written(deployment)
            if 'api' in via and args.list_calls:
                listing = list_detail(paths, placed(results) + len(warmed(via)), args,
                                      capacity=capacity - placed(results))
            cast_vhost = rabbit.create_vhost('castbench')
            casts = cast_rate(rabbit.url_for(cast_vhost), args.casts)
        finally:
            if transport is not None:
                transport.cleanup()
            if api_engine is not None:
                api_engine.dispose()
            deployment.destroy()
            if cast_vhost:
                rabbit.delete_vhost(cast_vhost)
    hosts = sum(len(c.hosts) for c in computes)
    scheduler_cpu = cpu.get('scheduler', 0.0)
    booted = sum(r['instances'] for r in results)
    return {'machine': machine(), 'load_before': load_before, 'load_after': os.getloadavg(),
            'cells': args.cells, 'hosts': hosts, 'agents': args.agents,
            'agent_processes': len(computes), 'startup_seconds': startup,
            'startup_timeline': timeline, 'startup_cpu_seconds': startup_cpu,
            'idle_cpu_percent_of_a_core': idle, 'agent_rss_mib': rss,
            'agent_rss_kib_per_host': rss * 1024 / hosts,
            'scheduler_cpu_ms_per_boot': scheduler_cpu * 1000 / booted,
            'scheduler_workers': args.scheduler_workers, 'exact_fit': exact,
            'results': results, 'scheduling': conflicts, 'broker': casts,
            'cpu_seconds_during_boots': cpu,
            'queues': queues,
            'broker_setup': ('machine broker' if cluster is None
                             else 'own node' if len(cluster.nodes) == 1
                             else f'cluster of {len(cluster.nodes)}'),
            'broker_runtime': (None if cluster is None else {
                'erl_args': cluster.nodes[0].erl_args,
                'advanced_config': cluster.nodes[0].advanced_config}),
            'cellplane_cpu_ms_per_boot': 1000 * sum(
                v for k, v in cpu.items() if not k.startswith('this process')) / booted,
            'broker_cpu_ms_per_boot': (None if broker_seconds is None
                                       else 1000 * broker_seconds / booted),
            'broker_cpu_ms_per_boot_by_node': {
                node: 1000 * (seconds - broker_before_by_node.get(node, 0.0)) / booted
                for node, seconds in broker_after_by_node.items()},
            'broker_profile': profile, 'broker_profile_idle': idle_profile,
            'broker_idle_percent_of_a_core_by_node': broker_idle,
            'database_cpu_ms_per_boot': (None if database_seconds is None
                                         else 1000 * database_seconds / booted),
            'batch_size': args.batch, 'record_backend': record_backend or 'default',
            'records_written': written, 'connections': watch.report(),
            'api': None if 'api' not in via else {
                'auth': 'keystone' if keystone_wanted(args) else 'noauth2',
                'workers': args.api_workers, 'microversion': paths['api'].client.version,
                'listing': listing}}


def render(report: dict) -> str:
    broker = report['broker']
    lines = [
        f'Boot benchmark - {report["machine"]}',
        f'Scheduling records: [scheduler] record_backend = {report["record_backend"]} '
        f'({_or_dash(report["records_written"])} records written); queues: '
        f'{report["queues"]} on {report.get("broker_setup", "machine broker")}',
        f'{report["cells"]} cells x {report["hosts"] // report["cells"]} fake hosts in '
        f'{report["agent_processes"]} compute agent process(es) ({report["agents"]}); real '
        f'daemons on RabbitMQ and PostgreSQL (deployment up in '
        f'{report["startup_seconds"]:.0f} s)',
        'Start-up, seconds from the start: ' + '; '.join(
            f'{step} {seconds:.1f}' for step, seconds in report['startup_timeline'].items()),
        'Start-up, CPU seconds: ' + '; '.join(
            f'{role} {seconds:.1f}' for role, seconds in report['startup_cpu_seconds'].items()),
        f'Idle, all daemons: {report["idle_cpu_percent_of_a_core"]:.1f} % of a core over '
        f'{IDLE_SECONDS} s; compute agents\' RSS {report["agent_rss_mib"]:.0f} MiB '
        f'({report["agent_rss_kib_per_host"]:.0f} KiB per host)',
        'Load average (1, 5, 15 min) before: '
        + ', '.join(f'{x:.1f}' for x in report['load_before'])
        + '; after: ' + ', '.join(f'{x:.1f}' for x in report['load_after'])
        + ' - other work on this machine shares its cores',
        '',
        '| scenario | via | instances | requests | boots/s | scheduling ms/instance median '
        '| p95 | ACTIVE | ERROR |',
        '|---|---|---|---|---|---|---|---|---|',
    ]
    for r in report['results']:
        lines.append(f'| {_label(r, report)} | {r.get("via", "direct")} | {r["instances"]} | '
                     f'{r["requests"]} | {r["boots_per_second"]:.1f} | '
                     f'{r["schedule_ms_median"]:.1f} | {r["schedule_ms_p95"]:.1f} | '
                     f'{r["active"]} | {r["error"]} |')
    if report.get('api'):
        lines += ['', render_api(report)]
    scheduling = report['scheduling']
    lines += [
        '',
        f'Claim conflicts: {scheduling["claim_conflicts"]} in '
        f'{scheduling["scheduler_runs"]} scheduler runs '
        f'({report["scheduler_workers"]} scheduler worker(s)): '
        f'{scheduling["claim_conflicts"] / max(1, scheduling["scheduler_runs"]):.3f} per run.',
        f'Batch claims (one POST /allocations per multi-create): '
        f'{scheduling.get("batch_claims", 0)}, of which '
        f'{scheduling.get("batch_claims_fell_back", 0)} refused and claimed one '
        f'instance at a time.',
        '',
        'Scheduler stages per run, ms (from its scheduling records; the rest of the '
        'scheduling time is the RPC call and the super conductor):',
        '| runs | stage | median | p95 |',
        '|---|---|---|---|',
    ]
    for kind, stages in scheduling.get('stages', {}).items():
        for stage, ms in stages.items():
            lines.append(f'| {kind} | {stage} | {ms["median"]:.1f} | {ms["p95"]:.1f} |')
    lines += [
        '',
        f'Broker, same run: {broker["casts"]} plain casts, '
        f'{broker["sent_per_second"]:.0f}/s sent, '
        f'{broker["delivered_per_second"]:.0f}/s delivered to a trivial server.',
    ]
    for r in report['results']:
        lines.append(f'  {r["scenario"]} ({r.get("via", "direct")}): '
                     f'{r["boots_per_second"]:.1f} boots/s = '
                     f'{r["boots_per_second"] / broker["delivered_per_second"]:.3f} x the raw '
                     f'cast rate (a boot: 1 cast + 1 call + 2 casts, DB writes, '
                     f'Placement calls)')
    if report['exact_fit'] is not None:
        exact, single = report['exact_fit'], report['results'][0]
        lines.append(f'Exact fit: {single["active"]} of {single["instances"]} placed '
                     f'({100 * single["active"] / single["instances"]:.1f} %), '
                     f'{exact["providers_full"]} of {report["hosts"]} hosts full, '
                     f'{len(exact["providers_over_capacity"])} over capacity'
                     + (': ' + ', '.join(exact['providers_over_capacity'][:10])
                        if exact['providers_over_capacity'] else ''))
    total = sum(r['instances'] for r in report['results'])
    lines.append(f'Scheduler CPU per boot: {report["scheduler_cpu_ms_per_boot"]:.1f} ms; '
                 f'all cellplane daemons: {report["cellplane_cpu_ms_per_boot"]:.1f} ms; '
                 f'RabbitMQ: {_ms(report["broker_cpu_ms_per_boot"])}; '
                 f'PostgreSQL: {_ms(report.get("database_cpu_ms_per_boot"))} '
                 f'(every database on this server, other users\' included)')
    by_node = report.get('broker_cpu_ms_per_boot_by_node')
    if by_node and len(by_node) > 1:
        lines.append('  RabbitMQ per node: ' + ', '.join(
            f'{node} {ms:.1f} ms' for node, ms in by_node.items()))
    if report.get('broker_runtime'):
        runtime = report['broker_runtime']
        lines.append(f'  RabbitMQ nodes run with Erlang flags "{runtime["erl_args"]}", '
                     f'advanced.config {runtime["advanced_config"]}')
    idle = report.get('broker_idle_percent_of_a_core_by_node')
    if idle:
        lines.append(f'  RabbitMQ idle (the {IDLE_SECONDS} s before the boots, the deployment '
                     f'up): {sum(idle.values()):.1f} % of a core ('
                     + ', '.join(f'{node} {pct:.1f} %' for node, pct in idle.items()) + ')')
    if report.get('broker_profile_idle'):
        lines.append(broker_profile.render(report['broker_profile_idle'], IDLE_SECONDS,
                                           f'idle for {IDLE_SECONDS} s', 'second'))
    if report.get('broker_profile'):
        lines.append(broker_profile.render(report['broker_profile'], total,
                                           f'over the {total} boots', 'boot'))
    connections = report['connections']
    lines.append(f'PostgreSQL connections during the boots, peak: {connections["peak_ours"]} '
                 f'held by this deployment and benchmark; {connections["peak_server"]} on the '
                 f'server, every user (max_connections {connections["max_connections"]}); '
                 f'{connections["failed_samples"]} samples failed')
    lines.append('  per process: ' + ', '.join(
        f'{name} {n}' for name, n in connections['peak_by_process'].items()))
    lines.append(f'CPU seconds per process during the {total} boots (both scenarios):')
    for role, seconds in report['cpu_seconds_during_boots'].items():
        lines.append(f'  {role}: {seconds:.1f} s ({seconds / total * 1000:.1f} ms per boot)')
    return '\n'.join(lines)


def _label(result: dict, report: dict) -> str:
    return 'single' if result['scenario'] == 'single' else f'batch of {report["batch_size"]}'


def render_api(report: dict) -> str:
    """Today's path against the compute API's, scenario by scenario, and the detail list."""
    api = report['api']
    auth = ('Keystone tokens, validated by keystonemiddleware' if api['auth'] == 'keystone'
            else 'noauth2: no Keystone here, tokens not validated (--keystone or '
                 'CELLPLANE_KEYSTONE_VENV for real ones)')
    lines = [f'Through the compute API: cellplane-api, {api["workers"]} worker(s), '
             f'microversion {api["microversion"]}; auth: {auth}.',
             'API-role CPU per boot: direct, this process while it wrote and cast the requests '
             '(its database polls apart); API, the cellplane-api processes while the POSTs were '
             'answered and while GET /servers/detail was polled.',
             '',
             '| scenario | boots/s direct | boots/s API | API / direct | direct: API-role CPU '
             'ms/boot | API: POST CPU ms/boot | API: polls CPU ms/boot | API: CPU ms/boot '
             '| polls |',
             '|---|---|---|---|---|---|---|---|---|']
    by = {(r['scenario'], r.get('via', 'direct')): r for r in report['results']}
    for scenario in ('single', 'batch'):
        direct, through = by.get((scenario, 'direct')), by.get((scenario, 'api'))
        if through is None:
            continue
        ratio = ('-' if direct is None else
                 f'{through["boots_per_second"] / direct["boots_per_second"]:.2f}')
        lines.append(
            f'| {_label(through, report)} | '
            f'{"-" if direct is None else format(direct["boots_per_second"], ".1f")} | '
            f'{through["boots_per_second"]:.1f} | {ratio} | '
            f'{"-" if direct is None else format(direct["api_cpu_ms_send"], ".2f")} | '
            f'{through["api_cpu_ms_send"]:.2f} | {through["api_cpu_ms_watch"]:.2f} | '
            f'{through["api_cpu_ms_send"] + through["api_cpu_ms_watch"]:.2f} | '
            f'{through.get("polls", "-")} |')
    listing = api['listing']
    if listing is None:     # --list-calls 0
        return '\n'.join(lines)
    lines.append(
        f'GET /servers/detail?limit=1000 over {listing["servers"]} servers in '
        f'{report["cells"]} cells, as the project\'s member ({listing["listed"]} listed): '
        f'median {listing["ms_median"]:.1f} ms, p95 {listing["ms_p95"]:.1f} ms of '
        f'{listing["calls"]} calls; the API\'s CPU {listing["api_cpu_ms_per_call"]:.1f} ms '
        f'per call.')
    return '\n'.join(lines)


def _or_dash(value) -> str:
    return '-' if value is None else str(value)


def _ms(value: float | None) -> str:
    return '-' if value is None else f'{value:.1f} ms'


def render_queues(reports: list[dict]) -> str:
    """Durable against transient queues: one row per run and scenario."""
    lines = [f'Queue durability - {reports[0]["machine"]}',
             '',
             '| broker | queues | scenario | boots/s | raw casts/s | boots per 1,000 casts '
             '| cellplane CPU ms/boot | RabbitMQ CPU ms/boot | load before |',
             '|---|---|---|---|---|---|---|---|---|']
    for report in reports:
        casts = report['broker']['delivered_per_second']
        for r in report['results']:
            lines.append(
                f'| {report.get("broker_setup", "machine broker")} | {report["queues"]} | '
                f'{r["scenario"]} | {r["boots_per_second"]:.1f} | '
                f'{casts:.0f} | {1000 * r["boots_per_second"] / casts:.1f} | '
                f'{report["cellplane_cpu_ms_per_boot"]:.1f} | '
                f'{_ms(report["broker_cpu_ms_per_boot"])} | '
                f'{report["load_before"][0]:.1f} |')
    lines.append('(CPU per boot: both scenarios together; runs are sequential on a '
                 'shared machine, compare with the load in mind)')
    return '\n'.join(lines)


def render_comparison(reports: list[dict]) -> str:
    """The runs side by side, one row per record backend and scenario."""
    lines = [f'Scheduling records on and off - {reports[0]["machine"]}',
             '',
             '| record_backend | scenario | boots/s | scheduling ms/instance median | p95 '
             '| scheduler CPU s | records written | load before |',
             '|---|---|---|---|---|---|---|---|']
    for report in reports:
        for r in report['results']:
            lines.append(
                f'| {report["record_backend"]} | {r["scenario"]} | '
                f'{r["boots_per_second"]:.1f} | {r["schedule_ms_median"]:.1f} | '
                f'{r["schedule_ms_p95"]:.1f} | '
                f'{report["cpu_seconds_during_boots"].get("scheduler", 0.0):.1f} | '
                f'{_or_dash(report["records_written"])} | {report["load_before"][0]:.1f} |')
    lines.append('(scheduler CPU: both scenarios together; runs are sequential on '
                 'a shared machine, compare with the load in mind)')
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--instances', type=int, default=200, help='K (default 200)')
    parser.add_argument('--cells', type=int, default=2, help='C (default 2)')
    parser.add_argument('--hosts-per-cell', type=int, default=5, help='H (default 5)')
    parser.add_argument('--scheduler-workers', type=int, default=1,
                        help='scheduler daemons sharing the requests (default 1)')
    parser.add_argument('--exact-fit', action='store_true',
                        help='give each host room for exactly instances / hosts of the '
                             'flavor and boot them all as single requests: 100 %% must '
                             'be placed and no host over capacity')
    parser.add_argument('--agents', choices=('hollow', 'one-per-host'), default='hollow',
                        help='one hollow agent per cell serving its H hosts (default), '
                             'or one agent process per host')
    parser.add_argument('--batch', type=int, default=10, help='B (default 10)')
    parser.add_argument('--casts', type=int, default=2000,
                        help='casts of the raw broker measure (default 2000)')
    parser.add_argument('--handler-threads', type=int, default=8,
                        help='rpc_handler_threads of every daemon (default 8)')
    parser.add_argument('--json', metavar='FILE', help='also write the report as JSON')
    parser.add_argument('--stall-seconds', type=float, default=STALL_SECONDS,
                        help='stop when no instance became ACTIVE or ERROR for this long '
                             f'(default {STALL_SECONDS:g})')
    parser.add_argument('--record-backends', metavar='NAMES',
                        help='comma-separated [scheduler] record_backend values, one '
                             'full run each, e.g. none,database (default: one run, '
                             "the scheduler's default)")
    parser.add_argument('--queues', metavar='SETTINGS', default='quorum',
                        help='comma-separated queue settings, one full run each: '
                             'quorum (cellplane\'s default), quorum+ (deploy/two-cell\'s: '
                             'stable reply names, stream fanouts), durable (classic) or '
                             'transient (classic), e.g. quorum,durable (default: quorum)')
    parser.add_argument('--brokers', metavar='BROKERS',
                        help='comma-separated: node (a RabbitMQ node of the run\'s own) '
                             'and/or cluster (three of them, clustered); each queue setting '
                             'runs on each (default: the machine\'s broker)')
    parser.add_argument('--pairs', metavar='BROKER:QUEUES,...',
                        help='instead of every queue setting on every broker, these '
                             'pairs in this order, e.g. node:durable,cluster:quorum,'
                             'cluster:quorum,node:durable (brokers node or cluster)')
    parser.add_argument('--broker-erl-args', metavar='FLAGS', default=ERL_ARGS,
                        help='with --brokers: the Erlang VM flags of every node, one and '
                             'the cluster\'s alike (RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS; '
                             f'default the test harness\'s: {ERL_ARGS})')
    parser.add_argument('--broker-advanced-config', metavar='TERM', default='[].',
                        help='with --brokers: every node\'s advanced.config, e.g. '
                             '"[{ra, [{wal_sync_method, none}]}]." (default [].)')
    parser.add_argument('--profile-broker', action='store_true',
                        help='with --brokers: where each node spent the boots (its '
                             'schedulers\' states, reductions by kind of process: '
                             'benchmarks/broker_profile.py)')
    parser.add_argument('--profile', type=Path, metavar='DIR',
                        help='py-spy records every daemon while idle and over the boots, '
                             'as collapsed stacks in DIR/DAEMON-idle.txt and '
                             'DIR/DAEMON-boots.txt (benchmarks/daemon_profile.py DIR sums '
                             'them up); the recording costs CPU, so its figures are not '
                             'for comparison')
    parser.add_argument('--via', metavar='PATHS', default='direct',
                        help='comma-separated: direct (today\'s path: the API role\'s '
                             'servers.create from this process, the databases polled) and/or '
                             'api (cellplane-api over HTTP: POST /servers, GET '
                             '/servers/detail polled); with both, each scenario runs '
                             'through each in turn in one deployment (default: direct)')
    parser.add_argument('--keystone', action='store_true',
                        help='--via api with real tokens: a Keystone of the run\'s own '
                             '(also when CELLPLANE_KEYSTONE_VENV is set); else noauth2')
    parser.add_argument('--api-workers', type=int, default=2,
                        help='[api] workers of cellplane-api (default 2, its default)')
    parser.add_argument('--list-servers', type=int, default=1000,
                        help='--via api: servers in the project when GET /servers/detail'
                             '?limit=1000 is timed, booted up to that many first '
                             '(default 1000)')
    parser.add_argument('--list-calls', type=int, default=20,
                        help='--via api: GET /servers/detail?limit=1000 calls timed '
                             '(default 20; 0 leaves the listing out)')
    args = parser.parse_args(argv)
    via = args.via.split(',')
    if not via or not set(via) <= {'direct', 'api'} or len(set(via)) != len(via):
        parser.error(f'--via takes direct, api or both (comma-separated), got {args.via}')
    if args.list_calls < 0:
        parser.error(f'--list-calls must be 0 or more, not {args.list_calls}')
    if args.keystone and 'api' not in via:
        parser.error('--keystone is for --via api')
    if args.keystone and not (KEYSTONE_VENV / 'bin' / 'keystone-manage').exists():
        parser.error(f'--keystone: no Keystone in {KEYSTONE_VENV}: run '
                     f'tools/keystone/setup_venv.sh or set CELLPLANE_KEYSTONE_VENV')
    queues = args.queues.split(',')
    if not set(queues) <= set(rpc_options.QUEUE_SETTINGS):
        parser.error(f'--queues takes {", ".join(sorted(rpc_options.QUEUE_SETTINGS))}, '
                     f'got {args.queues}')
    if args.exact_fit and args.instances % (args.cells * args.hosts_per_cell):
        parser.error(f'--exact-fit needs --instances ({args.instances}) to be a multiple of '
                     f'the hosts ({args.cells * args.hosts_per_cell})')
    refused = refuse_over_capacity(args, fake_driver_of(args))
    if refused:
        parser.error(refused)
    brokers = args.brokers.split(',') if args.brokers else ['machine']
    if not set(brokers) <= {'node', 'cluster'} and brokers != ['machine']:
        parser.error(f'--brokers takes node, cluster or both (comma-separated), '
                     f'got {args.brokers}')
    pairs = [(broker, setting) for broker in brokers for setting in queues]
    if args.pairs:
        pairs = [tuple(pair.split(':', 1)) for pair in args.pairs.split(',')]
        if not all(len(p) == 2 and p[0] in ('node', 'cluster')
                   and p[1] in rpc_options.QUEUE_SETTINGS for p in pairs):
            parser.error(f'--pairs takes BROKER:QUEUES pairs (node or cluster; '
                         f'{", ".join(sorted(rpc_options.QUEUE_SETTINGS))}), got {args.pairs}')
        brokers = list(dict.fromkeys(broker for broker, _ in pairs))
        queues = list(dict.fromkeys(setting for _, setting in pairs))
    if args.profile_broker and 'machine' in brokers:
        parser.error('--profile-broker needs --brokers (nodes of the run\'s own)')
    if args.profile is not None:
        daemon_profile.py_spy()
        args.profile.mkdir(parents=True, exist_ok=True)
    backends = args.record_backends.split(',') if args.record_backends else [None]
    reports = []
    with contextlib.ExitStack() as stack:
        started: dict[str, RabbitCluster | None] = {'machine': None}
        for broker in brokers:
            if broker != 'machine':
                workdir = stack.enter_context(tempfile.TemporaryDirectory(
                    prefix=f'cellplane-bench-{broker}-'))
                started[broker] = RabbitCluster(
                    Path(workdir) / 'nodes', size=1 if broker == 'node' else 3,
                    erl_args=args.broker_erl_args,
                    advanced_config=args.broker_advanced_config).start()
                stack.callback(started[broker].destroy)
        for backend in backends:
            for broker, setting in pairs:
                try:
                    reports.append(run(args, backend, queues=setting,
                                       cluster=started[broker]))
                except progress.BenchmarkStopped as exc:
                    print(f'boot_bench: stopped: {exc}', file=sys.stderr)
                    return 1
                print(render(reports[-1]), flush=True)
                print()
    if len(backends) > 1:
        print(render_comparison(reports))
    if len(queues) > 1 or len(brokers) > 1:
        print(render_queues(reports))
    if args.json:
        Path(args.json).write_text(json.dumps(
            reports[0] if len(reports) == 1 else reports, indent=2, default=str))
    return 0


if __name__ == '__main__':
    sys.exit(main())
