"""The scale ladder: the same boots at 5, 50 and 500 hosts per cell, embedded and on the daemons.

    .venv/bin/python benchmarks/scale_ladder.py [--sizes 5,50,500] [--cells 2]
                                                [--rounds 2] [--json FILE]
    .venv/bin/python benchmarks/scale_ladder.py --shapes 2x5,10x500 [--instances 300]

Each rung is a shape, C cells x H hosts per cell: ``--sizes`` with
``--cells`` gives C x each size, ``--shapes`` lists them (``2x5,10x500``:
the small deployment against ten cells of 500, issue 29's pair). For each
round and each shape (shapes interleaved, so that the machine's drift hits
every shape alike):

- embedded: ``cellplane demo --instances 400 --fail-fraction 0
  --failing-hosts 0 --cells C --hosts-per-cell H --format json`` in a child
  process: boots per second of the boot phase, and the process's peak RSS;
- daemons: ``benchmarks/boot_bench.py --cells C --hosts-per-cell H
  --instances K`` (K: ``--instances``, default 200; one
  hollow agent per cell, real RabbitMQ and PostgreSQL): boots per second of
  single requests and of batches of 10, scheduling ms per instance (median,
  p95), the scheduler's CPU ms per boot, the deployment's idle CPU, the
  agents' RSS, and the broker's raw cast rate in the same run.

It ends with one table of the medians over the rounds, and each shape's
boots per second as a share of the first shape's. ``--embedded-instances``
and ``--instances`` set the boots of each (a small smoke run: ``--shapes
1x2,2x2 --rounds 1 --embedded-instances 20 --instances 10``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import machine as machine_facts  # noqa: E402 - the sibling benchmarks/machine.py

EMBEDDED_INSTANCES = 400
DAEMON_INSTANCES = 200


def embedded(cells: int, hosts: int, instances: int = EMBEDDED_INSTANCES) -> dict:
    command = [sys.executable, '-m', 'cellplane_cli.cli', 'demo', '--instances',
               str(instances), '--fail-fraction', '0', '--failing-hosts', '0',
               '--cells', str(cells), '--hosts-per-cell', str(hosts), '--format', 'json']
    with tempfile.TemporaryFile(mode='w+') as errors:
        proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=errors,
                                text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or not out.strip():
            errors.seek(0)
            said = [line for line in errors.read().splitlines() if line.strip()]
            raise SystemExit(f'scale_ladder: the embedded demo at {cells} x {hosts} failed '
                             f'(exit {os.waitstatus_to_exitcode(status)}): '
                             f'{said[-1] if said else "it printed nothing"}')
    summary = json.loads(out)
    run = summary['run']
    return {'boots_per_second': run['instances_per_second'],
            'startup_seconds': run['startup_seconds'],
            'active': summary['active'], 'error': summary['error'],
            'rss_mib': usage.ru_maxrss / 1024, 'exit': os.waitstatus_to_exitcode(status)}


def daemons(cells: int, hosts: int, instances: int = DAEMON_INSTANCES) -> dict:
    with tempfile.NamedTemporaryFile(suffix='.json') as report:
        subprocess.run([sys.executable, str(REPO / 'benchmarks' / 'boot_bench.py'),
                        '--instances', str(instances), '--cells', str(cells),
                        '--hosts-per-cell', str(hosts), '--json', report.name],
                       cwd=REPO, check=True, stdout=subprocess.DEVNULL)
        found = json.loads(Path(report.name).read_text())
    single, batch = found['results']
    return {'single_boots_per_second': single['boots_per_second'],
            'batch_boots_per_second': batch['boots_per_second'],
            'schedule_ms_median': single['schedule_ms_median'],
            'schedule_ms_p95': single['schedule_ms_p95'],
            'scheduler_cpu_ms_per_boot': found['scheduler_cpu_ms_per_boot'],
            'cellplane_cpu_ms_per_boot': found['cellplane_cpu_ms_per_boot'],
            'idle_cpu_percent_of_a_core': found['idle_cpu_percent_of_a_core'],
            'agent_rss_mib': found['agent_rss_mib'],
            'casts_per_second': found['broker']['delivered_per_second'],
            'startup_seconds': found['startup_seconds'],
            'active': single['active'] + batch['active'],
            'error': single['error'] + batch['error']}


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def render(shapes: list[tuple[int, int]], rounds: int, found: dict) -> str:
    base = shapes[0]
    lines = [f"Scale ladder - {machine_facts.summary()}",
             f'medians of {rounds} round(s), shapes interleaved; ratios against '
             f'{base[0]} x {base[1]}', '',
             '| cells x hosts per cell | embedded boots/s | (vs first) | embedded RSS MiB '
             '| daemons single boots/s | (vs first) | batch of 10 boots/s | (vs first) '
             '| scheduling ms median / p95 | scheduler CPU ms/boot '
             '| cellplane CPU ms/boot | (vs first) | agents RSS MiB '
             '| idle CPU % of a core | deployment up s | raw casts/s |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for shape in shapes:
        e, d = found[shape]['embedded'], found[shape]['daemons']
        e_rate, d_rate = median_of(e, 'boots_per_second'), median_of(d, 'single_boots_per_second')
        b_rate = median_of(d, 'batch_boots_per_second')
        e_base = median_of(found[base]['embedded'], 'boots_per_second')
        d_base = median_of(found[base]['daemons'], 'single_boots_per_second')
        b_base = median_of(found[base]['daemons'], 'batch_boots_per_second')
        c_cost = median_of(d, 'cellplane_cpu_ms_per_boot')
        c_base = median_of(found[base]['daemons'], 'cellplane_cpu_ms_per_boot')
        lines.append(
            f'| {shape[0]} x {shape[1]} | {e_rate:.1f} | {100 * e_rate / e_base:.0f} % '
            f'| {median_of(e, "rss_mib"):.0f} | {d_rate:.1f} | {100 * d_rate / d_base:.0f} % '
            f'| {b_rate:.1f} | {100 * b_rate / b_base:.0f} % '
            f'| {median_of(d, "schedule_ms_median"):.0f} / {median_of(d, "schedule_ms_p95"):.0f} '
            f'| {median_of(d, "scheduler_cpu_ms_per_boot"):.1f} '
            f'| {c_cost:.1f} | {100 * c_cost / c_base:.0f} % '
            f'| {median_of(d, "agent_rss_mib"):.0f} '
            f'| {median_of(d, "idle_cpu_percent_of_a_core"):.1f} '
            f'| {median_of(d, "startup_seconds"):.0f} '
            f'| {median_of(d, "casts_per_second"):.0f} |')
    return '\n'.join(lines)


def shapes_of(text: str) -> list[tuple[int, int]]:
    """``2x5,10x500`` -> [(2, 5), (10, 500)]."""
    shapes = []
    for item in text.split(','):
        cells, _, hosts = item.strip().partition('x')
        if not (cells.isdigit() and hosts.isdigit()) or int(cells) < 1 or int(hosts) < 1:
            raise ValueError(f'a shape is CELLSxHOSTS, e.g. 10x500, not {item!r}')
        shapes.append((int(cells), int(hosts)))
    return shapes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--sizes', default='5,50,500',
                        help='hosts per cell, comma-separated, smallest first (default 5,50,500)')
    parser.add_argument('--cells', type=int, default=2, help='cells (default 2)')
    parser.add_argument('--shapes', metavar='CxH,...',
                        help='instead of --sizes and --cells: the shapes, comma-separated, '
                             'the first the base of the ratios, e.g. 2x5,10x500')
    parser.add_argument('--rounds', type=int, default=2, help='rounds (default 2)')
    parser.add_argument('--instances', type=int, default=DAEMON_INSTANCES,
                        help=f'boots of each daemons scenario (default {DAEMON_INSTANCES})')
    parser.add_argument('--embedded-instances', type=int, default=EMBEDDED_INSTANCES,
                        help=f'boots of each embedded run (default {EMBEDDED_INSTANCES})')
    parser.add_argument('--json', metavar='FILE', help='also write every run as JSON')
    args = parser.parse_args(argv)
    try:
        shapes = (shapes_of(args.shapes) if args.shapes
                  else [(args.cells, int(s)) for s in args.sizes.split(',')])
    except ValueError as exc:
        parser.error(str(exc))
    found = {shape: {'embedded': [], 'daemons': []} for shape in shapes}
    for round_ in range(1, args.rounds + 1):
        for cells, hosts in shapes:
            print(f'round {round_}, {cells} x {hosts} hosts: embedded ...',
                  file=sys.stderr, flush=True)
            found[(cells, hosts)]['embedded'].append(
                embedded(cells, hosts, args.embedded_instances))
            print(f'round {round_}, {cells} x {hosts} hosts: daemons ...',
                  file=sys.stderr, flush=True)
            found[(cells, hosts)]['daemons'].append(daemons(cells, hosts, args.instances))
    print(render(shapes, args.rounds, found))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {f'{cells}x{hosts}': runs for (cells, hosts), runs in found.items()}, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
