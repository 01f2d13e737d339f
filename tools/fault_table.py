"""The fault table: boots streamed through real daemons while one part of the deployment fails.

    .venv/bin/python tools/fault_table.py [--cases all|none,super-conductor,...]
                                          [--instances 200] [--settle 300] [--json FILE]

For each case a fresh deployment (``tests/support/deployment.py``: the
local launcher, RabbitMQ, PostgreSQL): 2 cells x 2 compute agents of one
fake host each (room for 256 instances), 1 s builds. ``--instances`` instances are asked for in
requests of 5 through the API role (what ``cellplane server create``
runs), one request every 0.2 s; a third of the way in the case's fault is
injected (SIGKILL by pid, restarted 5 s later where the case says so; or
RabbitMQ's application stopped for 7 s; or malformed messages; or a
database away: Placement's or cell1's cut at a TCP proxy of the case's own
while boots go on, every backend of the deployment's databases terminated,
or the whole PostgreSQL server restarted in fast mode, which every other
user of that server sees too: run ``postgres`` alone on a machine of your
own; or, on a three-node RabbitMQ cluster of the case's own
(``tests/support/rabbit_cluster.py``, every ``transport_url`` listing the
three nodes), the node leading the queues that hold builds killed with
SIGKILL and started again, two nodes stopped for 10 s, or a rolling restart
of the three; the boots go on while a database or a cluster node is away).
Then it
waits up to ``--settle`` seconds for nothing to be in BUILD, and counts:

- ACTIVE, ERROR (with the distinct reasons), still BUILD;
- leaked: Placement allocations whose consumer is not an ACTIVE instance,
  plus ACTIVE instances without one.

What every row must show: nothing in BUILD, nothing leaked, and where the
part came back within seconds, no ERROR. The short intervals the
deployment is given (below, ``SETTINGS``) are printed with the table.
Progress goes to stderr; each case takes one to three minutes.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cellplane import config
from cellplane.cells.databases import CellDatabases
from cellplane.context import new_context
from cellplane.db import away, engines
from cellplane.objects import flavors as api_flavors
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane_api import servers
from conductor.super.rpcapi import SuperConductorAPI
from tests.support import backing_services
from tests.support.deployment import ComputePlan, Deployment
from tests.support.malformed import send_malformed
from tests.support.rabbit_cluster import RabbitCluster

PROJECT = 'faults'
FLAVOR = ('fault.small', 1, 256, 1)
REQUEST_SIZE = 5
SEND_EVERY = 0.2
RESTART_AFTER = 5.0
BROKER_DOWN = 7.0
MALFORMED = 200
AFTER_MALFORMED = 20
PLACEMENT_DB_DOWN = 3.0
CELL_DB_DOWN = 60.0
CLUSTER_DOWN = 10.0
# The databases each case reaches through a TCP proxy it can cut.
PROXIED = {'placement-db': ('placement',), 'cell-db': ('cell1',)}

# The defaults, but for how often the conductors look and the two bounds
# that would use up most of the settle time (build_start_timeout 120 s,
# resume 120 s). build_timeout keeps its default (900 s): a lost cast is
# caught by build_start_timeout. service_down_time and
# rpc_response_timeout keep their defaults (60 s): a shorter
# service_down_time takes a broker restart for dead hosts.
SETTINGS = {
    'cell_conductor': {'stalled_build_check_interval': 5, 'build_start_timeout': 60},
    'super_conductor': {'resume_interval': 5, 'resume_unleased_after': 60},
}
# Room for every instance on one host of a cell: a cell that loses a host
# can still run all its instances.
FAKE_HOST = {'build_seconds': 1, 'vcpus': 64}

CASES = {
    'none': 'none',
    'cell-conductor': 'kill -9 a cell conductor, restarted 5 s later',
    'super-conductor': 'kill -9 the super conductor, restarted 5 s later',
    'scheduler': 'kill -9 the scheduler, restarted 5 s later',
    'compute': 'kill -9 one compute agent, never restarted',
    'broker': f'RabbitMQ stop_app, {BROKER_DOWN:g} s, start_app',
    'placement': 'kill -9 Placement (all its processes), restarted 5 s later',
    'malformed': f'{MALFORMED} malformed RPC messages to every topic, then '
                 f'{AFTER_MALFORMED} boots',
    'placement-db': f'Placement\'s database cut (TCP proxy) {PLACEMENT_DB_DOWN:g} s',
    'cell-db': f'cell1\'s database cut (TCP proxy) {CELL_DB_DOWN:g} s, cell2 up',
    'pg-terminate': 'pg_terminate_backend of every connection to the deployment\'s '
                    'databases',
    'postgres': 'pg_ctlcluster restart -m fast (the whole server: run it alone)',
    'cluster-leader': 'RabbitMQ cluster of 3: kill -9 the node leading the queues that '
                      'hold builds (cell1\'s agents frozen meanwhile), started again',
    'cluster-two-down': f'RabbitMQ cluster of 3: two nodes stopped {CLUSTER_DOWN:g} s '
                        f'(stop_app, start_app)',
    'cluster-rolling': 'RabbitMQ cluster of 3: rolling restart (stop_app, start_app, '
                       'one node after the other)',
}
# The cases run on a three-node cluster of their own, not on the machine's broker.
CLUSTER_CASES = ('cluster-leader', 'cluster-two-down', 'cluster-rolling')


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _kill(deployment: Deployment, name: str, *, group: bool = False) -> None:
    pid = deployment.pid(name)
    if group:
        os.killpg(pid, signal.SIGKILL)
    else:
        os.kill(pid, signal.SIGKILL)
    say(f'  SIGKILL {name} (pid {pid}{", its process group" if group else ""})')


def _restart_later(deployment: Deployment) -> None:
    time.sleep(RESTART_AFTER)
    deployment.launch('start', '--no-create')
    say('  restarted what was not running')


def inject(case: str, deployment: Deployment, rabbit,
           cluster: RabbitCluster | None = None) -> threading.Thread | None:
    """Inject the case's fault; the thread still injecting it (a database cut), if any."""
    if case in CLUSTER_CASES:
        # The boots go on while nodes are away, as the database cuts'.
        fault = threading.Thread(target=_cluster_fault, args=(case, deployment, cluster),
                                 daemon=True)
        fault.start()
        return fault
    if case == 'cell-conductor':
        _kill(deployment, 'conductor-cell1')
        _restart_later(deployment)
    elif case == 'super-conductor':
        _kill(deployment, 'super-conductor')
        _restart_later(deployment)
    elif case == 'scheduler':
        _kill(deployment, 'scheduler')
        _restart_later(deployment)
    elif case == 'compute':
        _kill(deployment, 'compute-cell1-host1')
    elif case == 'broker':
        say(f'  rabbitmqctl stop_app; {BROKER_DOWN:g} s; start_app')
        rabbit.restart_app(down_seconds=BROKER_DOWN)
    elif case == 'placement':
        _kill(deployment, 'placement', group=True)
        _restart_later(deployment)
    elif case in PROXIED:
        (name,) = PROXIED[case]
        down = PLACEMENT_DB_DOWN if case == 'placement-db' else CELL_DB_DOWN
        # The boots go on while the database is away.
        cut = threading.Thread(target=_cut, args=(deployment, name, down), daemon=True)
        cut.start()
        return cut
    elif case == 'pg-terminate':
        say(f'  terminated {_terminate_backends(deployment)} backend(s)')
    elif case == 'postgres':
        _restart_postgres()
    return None


def _cut(deployment: Deployment, name: str, seconds: float) -> None:
    proxy = deployment.database_proxies[name]
    say(f'  {name} database cut for {seconds:g} s')
    proxy.stop()
    time.sleep(seconds)
    proxy.start()
    say(f'  {name} database back')


def _cluster_fault(case: str, deployment: Deployment, cluster: RabbitCluster) -> None:
    try:
        _inject_cluster_fault(case, deployment, cluster)
    except Exception as exc:  # noqa: BLE001 - said, and the row counts what happened
        say(f'  the fault could not be injected in full: {type(exc).__name__}: {exc}')


def _inject_cluster_fault(case: str, deployment: Deployment, cluster: RabbitCluster) -> None:
    if case == 'cluster-leader':
        _kill_queue_leader(deployment, cluster)
    elif case == 'cluster-two-down':
        stopped = cluster.nodes[1:]
        say(f'  stop_app on {", ".join(n.node for n in stopped)}; {CLUSTER_DOWN:g} s')
        cluster.each(cluster.stop_app, stopped)
        time.sleep(CLUSTER_DOWN)
        cluster.each(cluster.start_app, stopped)
        cluster.wait_running()
        say('  start_app on both: every node runs')
    elif case == 'cluster-rolling':
        for node in cluster.nodes:
            began = time.monotonic()
            cluster.stop_app(node)
            cluster.start_app(node)
            cluster.wait_running()
            say(f'  {node.node} restarted (stop_app, start_app) in '
                f'{time.monotonic() - began:.1f} s')


def _kill_queue_leader(deployment: Deployment, cluster: RabbitCluster) -> None:
    """As tests/integration/test_broker_cluster.py: builds held in cell1's queues, their leader's
    node killed with SIGKILL and started again (its data kept: it rejoins by itself)."""
    agents = [deployment.pid(name) for name in ('compute-cell1-host1', 'compute-cell1-host2')]
    vhost = deployment.vhosts['cell1']
    for pid in agents:
        os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 120
        while not (queued := cluster.holding(vhost)):
            if time.monotonic() > deadline:
                raise RuntimeError(f'no build was ever queued in {vhost}')
            time.sleep(0.3)
        holding = list(queued.values())
        node = cluster.node(max(set(holding), key=holding.count))
        say(f'  cell1\'s agents frozen; {len(queued)} queue(s) holding messages, '
            f'{holding.count(node.node)} led by {node.node}: SIGKILL')
        began = time.monotonic()
        cluster.kill(node)
        cluster.restart(node)
        cluster.wait_running()
        say(f'  {node.node} started again, {time.monotonic() - began:.1f} s after its kill')
    finally:
        for pid in agents:
            os.kill(pid, signal.SIGCONT)


def _terminate_backends(deployment: Deployment) -> int:
    names = [make_url(url).database for url in deployment.databases.values()]
    admin = sa.create_engine(deployment.postgres.admin_url, isolation_level='AUTOCOMMIT',
                             poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            return len(conn.execute(sa.text(
                'SELECT pg_terminate_backend(pid) FROM pg_stat_activity '
                'WHERE datname = ANY(:names) AND pid <> pg_backend_pid()'),
                {'names': names}).all())
    finally:
        admin.dispose()


def _restart_postgres() -> None:
    """``pg_ctlcluster VERSION NAME restart -m fast`` of the (first) local cluster."""
    (version, name, *_), *_ = (line.split() for line in subprocess.run(
        ['pg_lsclusters', '-h'], capture_output=True, text=True, check=True).stdout.splitlines())
    began = time.monotonic()
    subprocess.run(['pg_ctlcluster', version, name, 'restart', '-m', 'fast'], check=True)
    say(f'  pg_ctlcluster {version} {name} restart -m fast: {time.monotonic() - began:.1f} s')


def count(deployment: Deployment, api_engine, uuids: list[str]) -> dict:
    cells = CellDatabases(api_engine)
    try:
        found = servers.list_servers(api_engine, cells, uuids, include_deleted=True)
    finally:
        cells.dispose()
    by_status: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for server in found:
        by_status[server.status] = by_status.get(server.status, 0) + 1
        if server.status == servers.ERROR:
            reason = (server.fault or '?').splitlines()[0][:400]
            reasons[reason] = reasons.get(reason, 0) + 1
    active = {s.uuid for s in found if s.status == 'ACTIVE'}
    allocated = set(deployment.placement().allocations_by_consumer())
    return {'status': by_status, 'error_reasons': reasons,
            'leaked': len(allocated - active) + len(active - allocated),
            'allocations': len(allocated), 'missing': len(set(uuids) - {s.uuid for s in found})}


def run_case(case: str, args, rabbit, postgres) -> dict:
    computes = [ComputePlan(f'cell{c}-host{h}', f'cell{c}', fake_driver=FAKE_HOST)
                for c in (1, 2) for h in (1, 2)]
    with tempfile.TemporaryDirectory(prefix='cellplane-faults-') as workdir, \
            contextlib.ExitStack() as stack:
        cluster = None
        if case in CLUSTER_CASES:
            say(f'{case}: starting a RabbitMQ cluster of three nodes')
            cluster = RabbitCluster(Path(workdir) / 'rabbit').start()
            stack.callback(cluster.destroy)
            rabbit = cluster.server()
        deployment = Deployment(
            Path(workdir), rabbit, postgres, computes,
            cell_conductor=SETTINGS['cell_conductor'],
            super_conductor=SETTINGS['super_conductor'],
            proxied_databases=PROXIED.get(case, ()))
        try:
            say(f'{case}: starting a deployment')
            deployment.create()
            api_engine = engines.create_engine(deployment.databases['api'])
            api_flavors.create(api_engine, name=FLAVOR[0], vcpus=FLAVOR[1],
                               memory_mb=FLAVOR[2], root_gb=FLAVOR[3])
            transport = get_transport(deployment.transport_url('top'))
            conductor = SuperConductorAPI(transport)
            ctxt = new_context(user_id='faults', project_id=PROJECT)
            uuids: list[str] = []
            injecting = None
            requests = args.instances // REQUEST_SIZE
            started = time.monotonic()
            try:
                if case == 'malformed':
                    say(f'  {send_malformed(deployment, MALFORMED)} malformed casts sent')
                    requests = AFTER_MALFORMED // REQUEST_SIZE
                for i in range(requests):
                    if i == requests // 3 and case not in ('none', 'malformed'):
                        injecting = inject(case, deployment, rabbit, cluster)
                    # Sent again while the API database is away, as a client
                    # sends a request the compute API answered 503 again.
                    uuids += away.retry_while_away(lambda i=i: servers.create(
                        api_engine, conductor, ctxt, name=f'{case}-{i}', flavor=FLAVOR[0],
                        count=REQUEST_SIZE, project_id=PROJECT, user_id='faults'),
                        timeout=args.settle)
                    time.sleep(SEND_EVERY)
                say(f'  {len(uuids)} instances asked for in {requests} requests; settling '
                    f'(up to {args.settle:g} s)')
                deadline = time.monotonic() + args.settle
                if injecting is not None:
                    injecting.join(args.settle)
                while True:
                    tally = count(deployment, api_engine, uuids)
                    # UNKNOWN: in a cell whose database could not be read.
                    unsettled = tally['status'].get('BUILD') or tally['status'].get('UNKNOWN')
                    if not unsettled or time.monotonic() > deadline:
                        break
                    time.sleep(2)
                tally['settled_seconds'] = time.monotonic() - started
            finally:
                transport.cleanup()
                api_engine.dispose()
        finally:
            deployment.destroy()
    say(f'  {tally["status"]}, leaked {tally["leaked"]}')
    return {'case': case, 'fault': CASES[case], 'instances': len(uuids), **tally}


def render(rows: list[dict]) -> str:
    lines = ['| fault | ACTIVE | ERROR | stuck in BUILD | allocations leaked | settled in |',
             '|---|---|---|---|---|---|']
    for r in rows:
        status = r['status']
        error = status.get('ERROR', 0)
        if error:
            reasons = '; '.join(f'{n} x "{text}"' for text, n in r['error_reasons'].items())
            error = f'{error}: {reasons}'
        lines.append(f'| {r["fault"]} | {status.get("ACTIVE", 0)} | {error} | '
                     f'{status.get("BUILD", 0) + r["missing"]} | {r["leaked"]} | '
                     f'{r["settled_seconds"]:.0f} s |')
    lines.append('')
    lines.append('Settings: ' + json.dumps({**SETTINGS, 'fake_driver': FAKE_HOST}))
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--cases', default='all',
                        help=f'comma-separated, of: {", ".join(CASES)} (default: all)')
    parser.add_argument('--instances', type=int, default=200,
                        help=f'instances per case, in requests of {REQUEST_SIZE} '
                             f'(default 200)')
    parser.add_argument('--settle', type=float, default=300,
                        help='seconds to wait for nothing in BUILD (default 300)')
    parser.add_argument('--json', metavar='FILE', help='also write the rows as JSON')
    args = parser.parse_args(argv)
    cases = list(CASES) if args.cases == 'all' else args.cases.split(',')
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f'unknown case(s) {", ".join(unknown)}; known: {", ".join(CASES)}')
    config.load([], prog='fault-table', setup_logging=False,
                registrars=[rpc_options.register_opts])
    rabbit = backing_services.find_rabbit()
    postgres = backing_services.find_postgres()
    rows = [run_case(case, args, rabbit, postgres) for case in cases]
    print(render(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as exc:
        print(f'fault_table: {exc}', file=sys.stderr)
        sys.exit(1)
