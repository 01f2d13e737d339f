"""Decision-rate benchmark: the scheduler's select-and-claim decisions per second, no builds.

    .venv/bin/python benchmarks/decision_bench.py [--workload benchmarks/workloads/decisions.yaml]
                                                  [--workers 1,2,4] [--json FILE]

In the manner of kube-scheduler's scheduler_perf: a declared workload
(``benchmarks/workloads/decisions.yaml``: cells, hollow hosts per cell,
racks, the flavor, alternates, callers, scheduler worker counts, and
scenarios, each a number of decisions, plain or as members of hard
affinity / anti-affinity server groups at host or rack level) is measured
against the scheduler alone. For each scheduler worker count it starts a
fresh deployment (``tests/support/deployment.py``: real RabbitMQ and
PostgreSQL, Placement, the scheduler daemons, one hollow compute agent per
cell reporting its hosts), puts the hosts in racks (failure domains, as
``cellplane failure-domain create`` does), and then, from ``clients``
threads at once, asks the scheduler for one instance at a time exactly as
the super conductor does (``SchedulerAPI.select_destinations`` with the
alternates): the instance's build request is written first, as the API
does, so a group's members are members. Nothing is built: a decision is a
host chosen and claimed in Placement, with its alternates. Before the
first decision it waits until each scheduler worker has made two periodic
host refreshes since the racks were set up (about 10 to 20 s): each has
then read the racks, instead of re-reading every host at its first
decision (the cost of an operator change, not of deciding; a re-read that
still falls in the measure is reported).

Per scenario and worker count it reports decisions per second (first ask
to last answer), the latency of one decision (p50, p99), the claim
conflicts per decision (from the scheduler's own records: a claim Placement
refused because another worker took the room first), NoValidHost answers
(a workload that asks more than its groups' policy allows fails them; the
run says so), and the CPU seconds per decision of the schedulers and of
Placement. A workload that asks more than its hosts hold is refused before
anything starts (exit 2); a decision answered with an error other than
NoValidHost stops the run with it (exit 1).

The scheduler's record of each run (``[scheduler] record_backend =
database``, the default) is what it keeps in production, so its cost is in
the figures, as it is in a real deployment's.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid as uuidlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Run as a script from the repository: the deployment helper lives in tests/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from cellplane import config
from cellplane.context import new_context
from cellplane.db import engines
from cellplane.objects import build_requests, server_groups
from cellplane.objects import failure_domains as domains_db
from cellplane.objects import flavors as api_flavors
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane_api import failure_domains, servers
from compute_agent.virt.fake import FakeDriver, FakeSettings
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from scheduler.errors import NoValidHost
from scheduler.rpcapi import SchedulerAPI

# isort: split
import boot_bench  # the sibling benchmarks/boot_bench.py: CPU accounting, percentiles
import daemon_profile  # the sibling benchmarks/daemon_profile.py: py-spy on each daemon
import decision_workload
import machine as machine_facts
import progress

from tests.support import backing_services
from tests.support.deployment import ComputePlan, Deployment

PROJECT = 'decide'
DEFAULT_WORKLOAD = Path(__file__).resolve().parent / 'workloads' / 'decisions.yaml'
CALL_TIMEOUT = 120.0
# Each scheduler worker's periodic host refresh logs this (at DEBUG, which the
# deployment's log settings keep); the second one after the racks were set up
# began after they were (a refresh may have been under way), so it read them.
REFRESHED = 'Host cache refreshed:'
SETTLE_TIMEOUT = 120.0
REREAD = 'Host cache re-read at a request'


def refreshes(deployment: Deployment) -> list[int]:
    """Each scheduler worker's periodic host refreshes so far, in worker order."""
    return [text.count(REFRESHED) for text in deployment.scheduler_logs()]


def settle(deployment: Deployment, before: list[int]) -> None:
    """Wait until every scheduler worker has refreshed twice since ``before`` (at most
    ``SETTLE_TIMEOUT``; a re-read that still falls in the measure is reported)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline:
        if all(now - then >= 2 for now, then in zip(refreshes(deployment), before, strict=True)):
            return
        time.sleep(0.5)
    print(f'decision_bench: the schedulers had not refreshed twice after the racks in '
          f'{SETTLE_TIMEOUT:g} s; measuring anyway', file=sys.stderr)


def rereads(deployment: Deployment) -> int:
    """How many times the scheduler workers re-read every host at a request (an operator change)."""
    return sum(text.count(REREAD) for text in deployment.scheduler_logs())


class DecisionFailed(Exception):
    """A decision was answered with an error other than NoValidHost: the run cannot be trusted."""


def per_host(workload: decision_workload.Workload) -> int:
    """Instances of the workload's flavor one fake host holds (its driver's inventory)."""
    inventory = FakeDriver(FakeSettings()).get_inventory()
    return progress.per_host({rc: progress.Inventory(i.total, i.reserved, i.allocation_ratio)
                              for rc, i in inventory.items()}, workload.flavor.asks)


def racks(deployment: Deployment, workload: decision_workload.Workload) -> dict[str, str]:
    """Put every host in a rack of ``hosts_per_rack`` (Placement aggregates); host -> rack."""
    api_engine = engines.create_engine(deployment.databases['api'])
    placement = deployment.placement()
    rack_of = {}
    try:
        # What the scheduler records when it starts, done here too: the racks
        # must not wait on whether it has yet.
        domains_db.record_levels(api_engine, ['rack'])
        for plan in deployment.computes:
            hosts = plan.hosts
            for first in range(0, len(hosts), workload.hosts_per_rack):
                name = f'{plan.cell}-r{first // workload.hosts_per_rack}'
                members = hosts[first:first + workload.hosts_per_rack]
                _, outcome = failure_domains.create(api_engine, placement, 'rack', name,
                                                    hosts=members)
                if outcome.error:
                    raise RuntimeError(f'Placement was not updated for a rack: {outcome.error}')
                rack_of.update(dict.fromkeys(members, name))
    finally:
        api_engine.dispose()
    return rack_of


def breaches(deployment: Deployment, rack_of: dict[str, str],
             members_by_group: dict[str, tuple[decision_workload.Group, list[str]]]) -> int:
    """Members placed against their group's hard policy, read from Placement's allocations.

    Not from the scheduler's own book of places: a fast decision that breaks
    the policy is no decision.
    """
    placement = deployment.placement()
    host_of_provider = {p.uuid: p.name for p in placement.list_providers()}
    found = 0
    for spec, uuids in members_by_group.values():
        domains = []
        for uuid in uuids:
            node = placement.get_allocations(uuid).node(host_of_provider.__contains__)
            if node is not None:
                host = host_of_provider[node]
                domains.append(rack_of.get(host, host) if spec.level == 'rack' else host)
        counts = {d: domains.count(d) for d in set(domains)}
        if spec.policy == 'anti-affinity':
            found += sum(n - spec.max_per_domain for n in counts.values()
                         if n > spec.max_per_domain)
        else:
            found += len(domains) - max(counts.values(), default=0)
    return found


class _Asker:
    """Asks the scheduler for one instance at a time, as the super conductor does."""

    def __init__(self, deployment: Deployment, workload: decision_workload.Workload) -> None:
        self.api_engine = engines.create_engine(deployment.databases['api'], pool_size=2,
                                                max_overflow=6)
        self.transport = get_transport(deployment.transport_url('top'))
        self.scheduler = SchedulerAPI(self.transport)
        self.workload = workload
        self.flavor = servers.flavor_payload(api_flavors.get(self.api_engine,
                                                             workload.flavor.name))

    def close(self) -> None:
        self.transport.cleanup()
        self.api_engine.dispose()

    def group(self, spec: decision_workload.Group, name: str):
        found = server_groups.create(self.api_engine, project_id=PROJECT, user_id=PROJECT,
                                     name=name, policy=spec.policy, level=spec.level,
                                     max_per_domain=(spec.max_per_domain
                                                     if spec.policy == 'anti-affinity'
                                                     else None))
        return servers.group_payload(found)

    def decide(self, group) -> tuple[str, float, str | None]:
        """One decision: ``(instance uuid, seconds, None or the NoValidHost reason)``."""
        instance_uuid = str(uuidlib.uuid4())
        spec = RequestSpec(flavor=self.flavor, project_id=PROJECT, user_id=PROJECT,
                           num_instances=1, instance_group=group)
        instance = Instance(uuid=instance_uuid, project_id=PROJECT, user_id=PROJECT,
                            flavor=self.flavor, display_name=f'd-{instance_uuid[:8]}',
                            launch_index=0)
        # As the API does (a group's members join it here); not timed.
        build_requests.record(self.api_engine, [instance], spec)
        ctxt = new_context(user_id=PROJECT, project_id=PROJECT)
        started = time.perf_counter()
        try:
            self.scheduler.select_destinations(ctxt, spec, [instance_uuid],
                                               self.workload.alternates, timeout=CALL_TIMEOUT)
        except NoValidHost as exc:
            return instance_uuid, time.perf_counter() - started, str(exc)
        except Exception as exc:
            raise DecisionFailed(f'{type(exc).__name__}: {exc}') from exc
        return instance_uuid, time.perf_counter() - started, None


def _conflicts(deployment: Deployment, uuids: set[str]) -> tuple[int, int]:
    """(scheduler runs, refused claims) of the runs that placed any of ``uuids``."""
    engine = engines.create_engine(deployment.databases['api'])
    try:
        with engine.connect() as conn:
            bodies = conn.execute(sa.text('SELECT record FROM scheduling_records')).scalars().all()
    finally:
        engine.dispose()
    runs = conflicts = 0
    for body in bodies:
        record = json.loads(body) if isinstance(body, str) else body
        if not uuids.intersection(record.get('instance_uuids') or ()):
            continue
        runs += 1
        conflicts += sum(1 for instance in record.get('instances') or ()
                         for claim in instance.get('claims') or ()
                         if claim.get('outcome') == 'conflict')
    return runs, conflicts


def _show(done: int, total: int, label: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f'\r  {label}: {done}/{total} decisions')
        if done == total:
            sys.stderr.write('\n')
        sys.stderr.flush()


def scenario(deployment: Deployment, asker: _Asker, item: decision_workload.Scenario,
             clients: int, label: str, rack_of: dict[str, str],
             profile: Path | None = None) -> dict:
    groups = [asker.group(item.group, f'{item.name}-{n}') for n in range(item.groups)]
    # Decision i joins group i // members: each group fills in turn, several at once.
    plan = ([groups[i // item.group.members] for i in range(item.decisions)]
            if item.group is not None else [None] * item.decisions)
    lock = threading.Lock()
    done = [0]

    def one(group):
        outcome = asker.decide(group)
        with lock:
            done[0] += 1
            _show(done[0], item.decisions, label)
        return outcome

    reread_before = rereads(deployment)
    before = boot_bench.daemon_cpu(deployment)
    started = time.perf_counter()
    phase = f'{label.split()[0]}w-{item.name}'   # "4w-plain": a file name
    with daemon_profile.profiled(deployment, profile, phase), ThreadPoolExecutor(clients) as pool:
        outcomes = list(pool.map(one, plan))
    seconds = time.perf_counter() - started
    cpu = boot_bench.cpu_by_role(before, boot_bench.daemon_cpu(deployment))
    reread = rereads(deployment) - reread_before
    time.sleep(1.0)     # the scheduler writes its records just after answering
    latencies = [o[1] for o in outcomes]
    refused = [o[2] for o in outcomes if o[2] is not None]
    placed = {o[0] for o in outcomes if o[2] is None}
    runs, conflicts = _conflicts(deployment, placed)
    members: dict[str, tuple[decision_workload.Group, list[str]]] = {}
    for group, outcome in zip(plan, outcomes, strict=True):
        if group is not None and outcome[2] is None:
            members.setdefault(group.uuid, (item.group, []))[1].append(outcome[0])
    scheduler_cpu = sum(v for k, v in cpu.items() if k.startswith('scheduler'))
    return {
        'scenario': item.name, 'decisions': item.decisions, 'placed': len(placed),
        'no_valid_host': len(refused),
        'no_valid_host_example': refused[0] if refused else None,
        'seconds': seconds, 'decisions_per_second': item.decisions / seconds,
        'p50_ms': statistics.median(latencies) * 1000,
        'p99_ms': boot_bench.percentile(latencies, 0.99) * 1000,
        'scheduler_runs_recorded': runs,
        'conflicts_per_decision': conflicts / max(1, len(placed)),
        'policy_breaches': breaches(deployment, rack_of, members) if members else 0,
        'scheduler_cpu_ms_per_decision': 1000 * scheduler_cpu / item.decisions,
        'placement_cpu_ms_per_decision': 1000 * cpu.get('placement', 0.0) / item.decisions,
        'full_rereads': reread,
    }


def run(workload: decision_workload.Workload, workers: int,
        profile: Path | None = None) -> dict:
    rabbit = backing_services.find_rabbit()
    postgres = backing_services.find_postgres()
    computes = [ComputePlan(f'cell{c}-hollow', f'cell{c}', hosted_hosts=workload.hosts_per_cell)
                for c in range(1, workload.cells + 1)]
    config.load([], prog='decision-bench', setup_logging=False,
                registrars=[rpc_options.register_opts])
    with tempfile.TemporaryDirectory(prefix='cellplane-decision-bench-') as workdir:
        deployment = Deployment(Path(workdir), rabbit, postgres, computes,
                                default_intervals=True, scheduler_workers=workers,
                                rpc_handler_threads=max(8, workload.clients),
                                scheduler_only={'scheduler': {'failure_domain_levels': 'rack'}})
        started = time.perf_counter()
        try:
            deployment.create()
            startup = time.perf_counter() - started
            rack_of = racks(deployment, workload)
            # Counted once every rack is written: refreshes during their writing
            # may have read only some of them.
            refreshed = refreshes(deployment)
            api_engine = engines.create_engine(deployment.databases['api'])
            try:
                flavor = workload.flavor
                api_flavors.create(api_engine, name=flavor.name, vcpus=flavor.vcpus,
                                   memory_mb=flavor.memory_mb, root_gb=flavor.root_gb)
            finally:
                api_engine.dispose()
            # Each worker would otherwise re-read all the hosts at its first decision
            # after the racks (an operator change): a cost of the setup, not of deciding.
            settle(deployment, refreshed)
            asker = _Asker(deployment, workload)
            try:
                results = [scenario(deployment, asker, item, workload.clients,
                                    f'{workers} worker(s), {item.name}', rack_of,
                                    profile=profile)
                           for item in workload.scenarios]
            finally:
                asker.close()
        finally:
            deployment.destroy()
    return {'scheduler_workers': workers, 'startup_seconds': startup,
            'racks': len(set(rack_of.values())),
            'results': results}


def render(workload: decision_workload.Workload, reports: list[dict], load: tuple) -> str:
    lines = [f'Decision rate: {workload.cells} cells x {workload.hosts_per_cell} hosts '
             f'({workload.hosts} hosts, racks of {workload.hosts_per_rack}), flavor '
             f'{workload.flavor.name}, {workload.alternates} alternates, '
             f'{workload.clients} callers; '
             + machine_facts.summary(f'load {load[0]:.1f} before the run'),
             '',
             '| workers | scenario | decisions | decisions/s | p50 ms | p99 ms | conflicts/decision '
             '| NoValidHost | policy breaches | scheduler CPU ms/decision '
             '| Placement CPU ms/decision |',
             '|---|---|---|---|---|---|---|---|---|---|---|']
    for report in reports:
        for r in report['results']:
            lines.append(
                f"| {report['scheduler_workers']} | {r['scenario']} | {r['decisions']} | "
                f"{r['decisions_per_second']:.1f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | "
                f"{r['conflicts_per_decision']:.3f} | {r['no_valid_host']} | "
                f"{r['policy_breaches']} | "
                f"{r['scheduler_cpu_ms_per_decision']:.1f} | "
                f"{r['placement_cpu_ms_per_decision']:.1f} |")
    for report in reports:
        for r in report['results']:
            if r.get('full_rereads'):
                lines.append(f"\n{report['scheduler_workers']} worker(s), {r['scenario']}: "
                             f"{r['full_rereads']} full re-read(s) of the hosts at a request "
                             f"during the measure (an operator change reached the workers)")
            if r['no_valid_host_example']:
                lines.append(f"\n{report['scheduler_workers']} worker(s), {r['scenario']}: "
                             f"{r['no_valid_host']} NoValidHost, e.g. "
                             f"{r['no_valid_host_example'][:300]}")
    lines.append('\nDeployment up: ' + ', '.join(
        f"{r['scheduler_workers']} worker(s) {r['startup_seconds']:.0f} s" for r in reports))
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--workload', type=Path, default=DEFAULT_WORKLOAD,
                        help=f'the workload YAML (default {DEFAULT_WORKLOAD.name})')
    parser.add_argument('--workers', metavar='N,N',
                        help="scheduler worker counts, instead of the workload's")
    parser.add_argument('--json', metavar='FILE', help='also write the reports as JSON')
    parser.add_argument('--profile', metavar='DIR', type=Path,
                        help='py-spy records every daemon over each scenario, as collapsed '
                             'stacks in DIR/DAEMON-<workers>w-<scenario>.txt '
                             '(benchmarks/daemon_profile.py DIR sums them up); the recording '
                             'costs CPU, so its figures are not for comparison')
    args = parser.parse_args(argv)
    try:
        workload = decision_workload.parse(args.workload.read_text())
    except OSError as exc:
        parser.error(f'--workload {args.workload}: {exc.strerror}')
    except decision_workload.WorkloadError as exc:
        parser.error(f'--workload {args.workload}: {exc}')
    if args.workers:
        try:
            counts = tuple(int(w) for w in args.workers.split(','))
        except ValueError:
            parser.error(f'--workers takes integers separated by commas, not {args.workers!r}')
        if any(c < 1 for c in counts):
            parser.error(f'--workers takes counts of at least 1, not {args.workers!r}')
        workload = decision_workload.Workload(**{**workload.__dict__,
                                                 'scheduler_workers': counts})
    refused = decision_workload.over_capacity(workload, per_host(workload))
    if refused:
        parser.error(refused)
    if args.profile:
        daemon_profile.py_spy()   # refused now, not after a deployment came up
        args.profile.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    reports = []
    for workers in workload.scheduler_workers:
        try:
            reports.append(run(workload, workers, profile=args.profile))
        except DecisionFailed as exc:
            print(f'decision_bench: stopped: {exc}', file=sys.stderr)
            return 1
    print(render(workload, reports, load))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {'machine': machine_facts.facts(), 'load_before': load, 'reports': reports},
            indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
