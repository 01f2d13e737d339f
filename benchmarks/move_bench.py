"""Move benchmark: boot K instances, then drain hosts cold and live, through the real daemons.

    .venv/bin/python benchmarks/move_bench.py [--cells 2] [--hosts-per-cell 50]
                                              [--instances 400] [--drain-hosts 10]
                                              [--parallel 10] [--move-seconds 1]
                                              [--handler-threads 8]
                                              [--modes cold,live] [--smoke] [--json FILE]

Starts C cells x H fake hosts served by one hollow compute agent per cell,
on real RabbitMQ and PostgreSQL (``tests/support/deployment.py``, as
``boot_bench.py`` does; the fake driver's ``move_seconds`` is each move's
simulated copy), boots K instances as single requests (``boot_bench``'s
direct path: what ``cellplane server create`` runs), then, per mode (cold,
then live), drains ``--drain-hosts`` hosts (the fullest ones, spread over
the cells; each mode its own hosts) with the code ``cellplane-manage host
drain --parallel N`` runs (``cellplane_api.host_drain.HostDrain``), all
of them at once, as that many operators each draining one host would.

It reports boots per second (first request cast to last instance ACTIVE),
moves per second per mode (first drain started to last one ended; an
instance counts once it moved), the scheduler's CPU per boot and per move
(its process's CPU time from /proc over each phase, divided by what the
phase did) with the other daemons' beside it, what did not move and why,
and how many migration consumers still hold an allocation in Placement at
the end (each migration's uuid asked; expected: none). The machine's
cores and load average (before, after) head the table.

``--smoke`` is a quick check of the whole path: 2 cells x 4 hosts, 16
instances, 2 hosts drained per mode.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Run as a script from the repository: the deployment helper lives in tests/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oslo_config import cfg

from cellplane import config
from cellplane.cells.databases import CellDatabases
from cellplane.context import new_context
from cellplane.db import engines
from cellplane.objects import flavors as api_flavors
from cellplane.objects import instances, migrations
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane_api import host_drain
from cellplane_cli.service_commands import compute_service_of
from conductor.super.rpcapi import SuperConductorAPI

# isort: split
import boot_bench  # the sibling benchmarks/boot_bench.py: deployment, boots, CPU
import daemon_profile  # the sibling benchmarks/daemon_profile.py: py-spy on each daemon
import progress  # the sibling benchmarks/progress.py

from tests.support import backing_services
from tests.support.deployment import ComputePlan, Deployment

SMOKE = {'cells': 2, 'hosts_per_cell': 4, 'instances': 16, 'drain_hosts': 2}
DEFAULTS = {'cells': 2, 'hosts_per_cell': 50, 'instances': 400, 'drain_hosts': 10}
MODES = (host_drain.COLD, host_drain.LIVE)
READ_TIMEOUT = 10.0
IDLE_SECONDS = 10.0
POOL = {'pool_size': 2, 'max_overflow': 2}
# This process: the boots' requests and watchers (what `cellplane server create
# --wait` runs), the drains (what `cellplane-manage host drain` runs).
CLIENT = 'this process (boot client; drains)'
# The machine's own RabbitMQ and PostgreSQL, which every phase uses as well.
BACKING = ('RabbitMQ (all vhosts)', 'PostgreSQL (all databases)')
# A move of this benchmark takes seconds: one still going after this is stuck.
MOVE_TIMEOUT = 120.0


def drained_hosts(deployment: Deployment, count: int, taken: set[str]) -> list[tuple[str, str]]:
    """``count`` (cell, host) pairs not in ``taken``: the fullest hosts, the cells in turn."""
    per_cell: dict[str, list[tuple[int, str]]] = {}
    for cell in deployment.cells:
        engine = deployment.cell_engine(cell)
        try:
            with engine.connect() as conn:
                rows = instances.list_all(conn)
        finally:
            engine.dispose()
        load: dict[str, int] = {}
        for row in rows:
            if row['host'] and row['host'] not in taken:
                load[row['host']] = load.get(row['host'], 0) + 1
        per_cell[cell] = sorted(((-n, host) for host, n in load.items()))
    chosen: list[tuple[str, str]] = []
    while len(chosen) < count and any(per_cell.values()):
        for cell in deployment.cells:
            if per_cell[cell] and len(chosen) < count:
                chosen.append((cell, per_cell[cell].pop(0)[1]))
    if len(chosen) < count:
        raise progress.BenchmarkStopped(f'only {len(chosen)} hosts with instances are left '
                                        f'to drain, {count} asked')
    return chosen


def drain_all(deployment: Deployment, api_engine, cells, conductor, hosts: list[str], *,
              mode: str, parallel: int, move_timeout: float) -> list[host_drain.DrainReport]:
    """Drain ``hosts`` at once (a thread each, as ``host drain HOST`` would); their reports."""
    def one(host: str) -> host_drain.DrainReport:
        located = compute_service_of(api_engine, cells, host, None, READ_TIMEOUT)
        drain = host_drain.HostDrain(api_engine, cells, conductor, new_context(), located,
                                     placement=deployment.placement(), mode=mode,
                                     parallel=parallel, move_timeout=move_timeout)
        return drain.run()

    with concurrent.futures.ThreadPoolExecutor(len(hosts)) as pool:
        return list(pool.map(one, hosts))


def left_on_migration_consumers(deployment: Deployment) -> dict:
    """Every migration of every cell, and those whose consumer still holds an allocation."""
    placement = deployment.placement()
    total, holding, statuses = 0, [], {}
    for cell in deployment.cells:
        engine = deployment.cell_engine(cell)
        try:
            with engine.connect() as conn:
                found = migrations.find(conn)
        finally:
            engine.dispose()
        for migration in found:
            total += 1
            statuses[migration.status] = statuses.get(migration.status, 0) + 1
            if placement.get_allocations(migration.uuid).allocations:
                holding.append(f'{migration.uuid} ({migration.migration_type}, '
                               f'{migration.status})')
    return {'migrations': total, 'statuses': statuses, 'holding': holding}


def _cpu_now(deployment) -> dict[str, float]:
    """CPU seconds so far: each daemon's, and the machine's RabbitMQ's and PostgreSQL's."""
    cpu = boot_bench.daemon_cpu(deployment)
    for name, seconds in zip(BACKING, (boot_bench.broker_cpu(), boot_bench.database_cpu()),
                             strict=True):
        if seconds is not None:
            cpu[name] = seconds
    return cpu


def move_phase(deployment, api_engine, cells, conductor, mode: str, hosts: list[str],
               parallel: int, profile: Path | None, move_timeout: float) -> dict:
    cpu_before = _cpu_now(deployment)
    own_before = time.process_time()
    started = time.perf_counter()
    with daemon_profile.profiled(deployment, profile, f'drain-{mode}'):
        reports = drain_all(deployment, api_engine, cells, conductor, hosts, mode=mode,
                            parallel=parallel, move_timeout=move_timeout)
    seconds = time.perf_counter() - started
    cpu = boot_bench.cpu_by_role(cpu_before, _cpu_now(deployment))
    cpu[CLIENT] = time.process_time() - own_before
    outcomes = [o for r in reports for o in r.outcomes]
    moved = [o for o in outcomes if o.result == host_drain.MOVED]
    not_moved: dict[str, int] = {}
    for o in outcomes:
        if o.result != host_drain.MOVED:
            reason = f'{o.result}: {progress.reason_kind(o.reason or "")}'
            not_moved[reason] = not_moved.get(reason, 0) + 1
    move_seconds = sorted(o.seconds for o in moved)
    return {'mode': mode, 'hosts': hosts, 'instances': len(outcomes), 'moved': len(moved),
            'not_moved': not_moved, 'left_on_hosts': sum(len(r.left) for r in reports),
            'seconds': seconds, 'moves_per_second': len(moved) / seconds,
            'move_seconds_median': (statistics.median(move_seconds)
                                    if move_seconds else float('nan')),
            'move_seconds_p95': boot_bench.percentile(move_seconds, 0.95),
            'cpu_seconds': cpu}


def run(args) -> dict:
    rabbit = backing_services.find_rabbit()
    postgres = backing_services.find_postgres()
    fake_driver = {'move_seconds': args.move_seconds}
    computes = [ComputePlan(f'cell{c}-hollow', f'cell{c}', fake_driver=fake_driver,
                            hosted_hosts=args.hosts_per_cell)
                for c in range(1, args.cells + 1)]
    capacity = args.cells * args.hosts_per_cell * boot_bench.host_capacity(fake_driver)
    load_before = os.getloadavg()
    config.load([], prog='move-bench', setup_logging=False,
                registrars=[rpc_options.register_opts])
    for name, value in rpc_options.QUEUE_SETTINGS['quorum'].items():
        cfg.CONF.set_override(name, value, group=rpc_options.RABBIT_GROUP)
    with tempfile.TemporaryDirectory(prefix='cellplane-move-bench-') as workdir:
        deployment = Deployment(Path(workdir), rabbit, postgres, computes,
                                default_intervals=True, queues='quorum',
                                rpc_handler_threads=args.handler_threads)
        transport = api_engine = cells = None
        started = time.perf_counter()
        try:
            deployment.create()
            startup = time.perf_counter() - started
            # Small pools: the drains' threads take turns (the database server is
            # shared, and its connections are the deployment's first).
            api_engine = engines.create_engine(deployment.databases['api'], **POOL)
            flavor = boot_bench.FLAVOR
            api_flavors.create(api_engine, name=flavor[0], vcpus=flavor[1],
                               memory_mb=flavor[2], root_gb=flavor[3], flavorid=flavor[0])
            transport = get_transport(deployment.transport_url('top'))
            conductor = SuperConductorAPI(transport)
            path = boot_bench.DirectPath(deployment, api_engine, conductor,
                                         project=boot_bench.PROJECT)

            # What the daemons use doing nothing (periodic tasks): per second.
            cpu_before = boot_bench.daemon_cpu(deployment)
            time.sleep(args.idle_seconds)
            idle = {role: seconds / args.idle_seconds for role, seconds in
                    boot_bench.cpu_by_role(cpu_before,
                                           boot_bench.daemon_cpu(deployment)).items()}
            cpu_before = _cpu_now(deployment)
            own_before = time.process_time()
            with daemon_profile.profiled(deployment, args.profile, 'boot'):
                boots = boot_bench.boot(deployment, path, name='single',
                                        sizes=[1] * args.instances, capacity=capacity,
                                        stall_seconds=args.stall_seconds)
            boot_cpu = boot_bench.cpu_by_role(cpu_before, _cpu_now(deployment))
            boot_cpu[CLIENT] = time.process_time() - own_before

            cells = CellDatabases(api_engine, engine_factory=functools.partial(
                engines.create_engine, **POOL))
            cells.reload()
            phases, taken = [], set()
            for mode in args.modes:
                chosen = [host for _, host in drained_hosts(deployment, args.drain_hosts,
                                                            taken)]
                taken |= set(chosen)
                print(f'move_bench: draining {len(chosen)} hosts {mode} ...',
                      file=sys.stderr, flush=True)
                phases.append(move_phase(deployment, api_engine, cells, conductor, mode,
                                         chosen, args.parallel, args.profile,
                                         args.move_timeout))
            # The last live move's source allocation is freed just after its
            # drain saw it: what is left now is left for good.
            time.sleep(2.0)
            leftovers = left_on_migration_consumers(deployment)
        finally:
            if args.keep_logs is not None:
                args.keep_logs.mkdir(parents=True, exist_ok=True)
                for log in deployment.run_dir.glob('*.log'):
                    shutil.copy(log, args.keep_logs / log.name)
            if cells is not None:
                cells.dispose()
            if transport is not None:
                transport.cleanup()
            if api_engine is not None:
                api_engine.dispose()
            deployment.destroy()
    return {'machine': boot_bench.machine(), 'load_before': load_before,
            'load_after': os.getloadavg(), 'cells': args.cells,
            'hosts_per_cell': args.hosts_per_cell, 'startup_seconds': startup,
            'parallel': args.parallel, 'move_seconds': args.move_seconds,
            'idle_cpu_per_second': idle,
            'boots': {**boots, 'cpu_seconds': boot_cpu}, 'moves': phases,
            'migration_consumers': leftovers}


def _per(cpu: dict[str, float], role: str, n: int) -> float:
    return 1000 * cpu.get(role, 0.0) / max(1, n)


def _net(report: dict, phase: dict, n: int) -> float:
    """The scheduler's CPU ms per boot or move, less what it uses idle over the phase's time."""
    idle = report['idle_cpu_per_second'].get('scheduler', 0.0) * phase['seconds']
    return 1000 * (phase['cpu_seconds'].get('scheduler', 0.0) - idle) / max(1, n)


def render(report: dict) -> str:
    boots, phases = report['boots'], report['moves']
    per_boot = _per(boots['cpu_seconds'], 'scheduler', boots['active'])
    net_boot = _net(report, boots, boots['active'])
    idle = report['idle_cpu_per_second'].get('scheduler', 0.0)
    lines = [
        f'Move benchmark - {report["machine"]}',
        'Load average (1, 5, 15 min) before: '
        + ', '.join(f'{x:.1f}' for x in report['load_before'])
        + '; after: ' + ', '.join(f'{x:.1f}' for x in report['load_after'])
        + ' - other work on this machine shares its cores',
        f'{report["cells"]} cells x {report["hosts_per_cell"]} hollow hosts (one agent per '
        f'cell); real daemons on RabbitMQ and PostgreSQL (up in '
        f'{report["startup_seconds"]:.0f} s); each move\'s simulated copy '
        f'{report["move_seconds"]:g} s; drains at --parallel {report["parallel"]}, the '
        f'hosts of a mode drained at once',
        f'Scheduler idle: {1000 * idle:.1f} ms of CPU per second (net: less that over the '
        f'phase\'s time)',
        '',
        '| phase | instances | done | seconds | per second | vs boots/s '
        '| scheduler CPU ms each | vs per boot | net of idle | vs per boot '
        '| move s median / p95 |',
        '|---|---|---|---|---|---|---|---|---|---|---|',
        f'| boot, single requests | {boots["instances"]} | {boots["active"]} ACTIVE '
        f'| {boots["seconds"]:.1f} | {boots["boots_per_second"]:.1f} | 1.00 '
        f'| {per_boot:.1f} | 1.00 | {net_boot:.1f} | 1.00 | - |',
    ]
    for phase in phases:
        per_move = _per(phase['cpu_seconds'], 'scheduler', phase['moved'])
        net_move = _net(report, phase, phase['moved'])
        lines.append(
            f'| drain {len(phase["hosts"])} hosts {phase["mode"]} | {phase["instances"]} '
            f'| {phase["moved"]} moved | {phase["seconds"]:.1f} '
            f'| {phase["moves_per_second"]:.1f} '
            f'| {phase["moves_per_second"] / boots["boots_per_second"]:.2f} '
            f'| {per_move:.1f} | {per_move / per_boot if per_boot else float("nan"):.2f} '
            f'| {net_move:.1f} | {net_move / net_boot if net_boot else float("nan"):.2f} '
            f'| {phase["move_seconds_median"]:.1f} / {phase["move_seconds_p95"]:.1f} |')
    consumers = report['migration_consumers']
    lines += ['',
              f'Migration consumers holding an allocation at the end: '
              f'{len(consumers["holding"])} of {consumers["migrations"]} migrations '
              f'(statuses: ' + ', '.join(f'{s} {n}' for s, n in
                                         sorted(consumers['statuses'].items())) + ')']
    lines += [f'  {held}' for held in consumers['holding'][:10]]
    for phase in phases:
        for reason, n in phase['not_moved'].items():
            lines.append(f'Not moved ({phase["mode"]}): {n} x {reason}')
        if phase['left_on_hosts']:
            lines.append(f'Left on the drained hosts ({phase["mode"]}): '
                         f'{phase["left_on_hosts"]}')
    lines += ['', 'CPU ms per boot / per move, by process:',
              '| process | per boot | ' + ' | '.join(f'per {p["mode"]} move' for p in phases)
              + ' |', '|---|---|' + '---|' * len(phases)]
    roles = [role for role in boots['cpu_seconds'] if role not in (CLIENT, *BACKING)]

    def row(label: str, seconds) -> str:
        """One line: ``seconds(cpu)`` in ms per boot, then per move of each phase."""
        per = [(boots['cpu_seconds'], boots['active'])] + [
            (p['cpu_seconds'], p['moved']) for p in phases]
        return (f'| {label} | '
                + ' | '.join(f'{1000 * seconds(cpu) / max(1, n):.1f}' for cpu, n in per)
                + ' |')

    lines += [row(role, lambda cpu, role=role: cpu.get(role, 0.0)) for role in roles]
    lines.append(row('the daemons, in all',
                     lambda cpu: sum(cpu.get(role, 0.0) for role in roles)))
    lines += [row(role, lambda cpu, role=role: cpu.get(role, 0.0))
              for role in (CLIENT, *BACKING) if role in boots['cpu_seconds']]
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--smoke', action='store_true',
                        help='a quick check: ' + ', '.join(f'--{k.replace("_", "-")} {v}'
                                                           for k, v in SMOKE.items())
                        + ' (options given win)')
    parser.add_argument('--cells', type=int, help=f'C (default {DEFAULTS["cells"]})')
    parser.add_argument('--hosts-per-cell', type=int,
                        help=f'H hollow hosts per cell (default {DEFAULTS["hosts_per_cell"]})')
    parser.add_argument('--instances', type=int,
                        help=f'K booted as single requests (default {DEFAULTS["instances"]})')
    parser.add_argument('--drain-hosts', type=int,
                        help=f'hosts drained per mode, at once (default '
                             f'{DEFAULTS["drain_hosts"]})')
    parser.add_argument('--parallel', type=int, default=10,
                        help='each drain\'s --parallel (default 10)')
    parser.add_argument('--handler-threads', type=int, default=8,
                        help='rpc_handler_threads of every daemon (default 8, as boot_bench.py)')
    parser.add_argument('--move-seconds', type=float, default=1.0,
                        help='the fake driver\'s simulated copy per move (default 1)')
    parser.add_argument('--modes', default='cold,live',
                        help='drain modes, in order, each on hosts of its own '
                             '(default cold,live)')
    parser.add_argument('--stall-seconds', type=float, default=boot_bench.STALL_SECONDS,
                        help='stop when no boot became final for this long '
                             f'(default {boot_bench.STALL_SECONDS:g})')
    parser.add_argument('--idle-seconds', type=float, default=IDLE_SECONDS,
                        help='seconds the idle daemons\' CPU is measured before the boots '
                             f'(default {IDLE_SECONDS:g})')
    parser.add_argument('--profile', type=Path, metavar='DIR',
                        help='py-spy records every daemon in each phase, as collapsed '
                             'stacks in DIR/DAEMON-PHASE.txt')
    parser.add_argument('--move-timeout', type=float, default=MOVE_TIMEOUT,
                        help='each drain stops waiting for one move after this long and '
                             f'reports it not moved (default {MOVE_TIMEOUT:g})')
    parser.add_argument('--keep-logs', type=Path, metavar='DIR',
                        help='copy the daemons\' logs to DIR before the deployment is removed')
    parser.add_argument('--json', metavar='FILE', help='also write the report as JSON')
    args = parser.parse_args(argv)
    if args.profile is not None:
        daemon_profile.py_spy()
        args.profile.mkdir(parents=True, exist_ok=True)
    sizes = SMOKE if args.smoke else DEFAULTS
    for key, value in sizes.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.modes = args.modes.split(',')
    if not args.modes or not set(args.modes) <= set(MODES):
        parser.error(f'--modes takes {" and/or ".join(MODES)}, comma-separated, '
                     f'got {",".join(args.modes)}')
    for key in ('cells', 'hosts_per_cell', 'instances', 'drain_hosts', 'parallel'):
        if getattr(args, key) < 1:
            parser.error(f'--{key.replace("_", "-")} must be at least 1')
    hosts = args.cells * args.hosts_per_cell
    if args.drain_hosts * len(args.modes) >= hosts:
        parser.error(f'--drain-hosts {args.drain_hosts} per mode leaves no host of the '
                     f'{hosts} to move to')
    capacity = hosts * boot_bench.host_capacity({'move_seconds': args.move_seconds})
    if args.instances > capacity:
        parser.error(f'--instances {args.instances}: {args.cells} cells x '
                     f'{args.hosts_per_cell} hosts hold {capacity} of '
                     f'{boot_bench.FLAVOR[0]}')
    try:
        report = run(args)
    except progress.BenchmarkStopped as exc:
        print(f'move_bench: stopped: {exc}', file=sys.stderr)
        return 1
    print(render(report), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == '__main__':
    sys.exit(main())
