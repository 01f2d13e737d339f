"""What starting cellplane's processes costs in CPU: each entry point's imports, and a test deployment.

The test suite is CPU-bound on a small machine, and most of its CPU goes to
starting processes (every daemon of every test deployment, every
``cellplane`` command a test runs). Two measures, each comparing source
trees (checkouts with their own ``.venv``, ``make venv``) in turns:

    python benchmarks/startup_cost.py --trees /path/old,/path/new [--runs 7]
    python benchmarks/startup_cost.py --trees ... --deployments 2

``imports``: the CPU (user + system) of a fresh interpreter importing each
entry point's module, min and median of ``--runs``. ``--deployments N``:
the CPU a two-cell test deployment of three hosts costs from ``create()``
to ``destroy()`` (``tests/support/deployment.py``), its daemons' and the
rest (launcher, broker and database administration), N times per tree.
The deployment needs the test services (RabbitMQ, PostgreSQL) as the
integration tests do.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

import machine  # benchmarks/machine.py: python benchmarks/x.py puts this folder first

ENTRY_POINTS = {
    'cellplane-compute': 'compute_agent.cmd', 'cellplane-conductor': 'conductor.cmd',
    'cellplane-scheduler': 'scheduler.cmd', 'cellplane-placement': 'placement.cmd',
    'cellplane-api': 'cellplane_api.cmd', 'cellplane': 'cellplane_cli.cli',
    'cellplane-manage': 'cellplane_cli.manage',
}

# Run by each tree's own interpreter, in that tree: one deployment's CPU as JSON.
_DEPLOYMENT_SCRIPT = '''
import json, os, resource, sys, tempfile
from pathlib import Path
sys.path.insert(0, os.getcwd())
import psutil
from tests.support import backing_services as services
from tests.support.deployment import ComputePlan, Deployment

def daemons_cpu(workdir):
    total = 0.0
    for process in psutil.process_iter(['cmdline']):
        try:
            if any(workdir in arg for arg in (process.info['cmdline'] or [])):
                times = process.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            pass
    return total

workdir = tempfile.mkdtemp(prefix='startup-cost-')
computes = [ComputePlan('c1a', 'cell1'), ComputePlan('c1b', 'cell1'), ComputePlan('c2a', 'cell2')]
deployment = Deployment(Path(workdir), services.find_rabbit(), services.find_postgres(),
                        computes).create()
try:
    deployment.wait_until_schedulable()
    daemons = daemons_cpu(workdir)
finally:
    deployment.destroy()
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({'daemons': daemons, 'rest': usage.ru_utime + usage.ru_stime}))
'''


def _child_cpu(command: list[str], cwd: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _python(tree: str) -> str:
    python = Path(tree) / '.venv' / 'bin' / 'python'
    if not python.exists():
        raise SystemExit(f'startup_cost.py: {python} is missing: run make venv in {tree}')
    return str(python)


def imports(trees: list[str], runs: int) -> dict[tuple[str, str], list[float]]:
    found: dict[tuple[str, str], list[float]] = {}
    for run in range(runs):
        for name, module in ENTRY_POINTS.items():
            for tree in trees:
                cpu = _child_cpu([_python(tree), '-W', 'ignore', '-c', f'import {module}'], tree)
                found.setdefault((name, tree), []).append(cpu)
        print(f'imports: run {run + 1} of {runs} done', file=sys.stderr, flush=True)
    return found


def deployments(trees: list[str], count: int) -> dict[str, list[tuple[float, float]]]:
    import json
    found: dict[str, list[tuple[float, float]]] = {}
    for run in range(count):
        for tree in trees:
            done = subprocess.run([_python(tree), '-c', _DEPLOYMENT_SCRIPT], cwd=tree,
                                  check=True, capture_output=True, text=True)
            cpu = json.loads(done.stdout.strip().splitlines()[-1])
            found.setdefault(tree, []).append((cpu['daemons'], cpu['rest']))
        print(f'deployments: run {run + 1} of {count} done', file=sys.stderr, flush=True)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trees', required=True,
                        help='comma-separated checkouts, each with its .venv')
    parser.add_argument('--runs', type=int, default=7, help='import runs per entry point')
    parser.add_argument('--deployments', type=int, default=0,
                        help='test deployments per tree (0: none)')
    args = parser.parse_args(argv)
    if args.runs < 1 or args.deployments < 0:
        parser.error('--runs must be at least 1 and --deployments at least 0')
    trees = [str(Path(t).resolve()) for t in args.trees.split(',') if t]
    print(machine.summary())
    print(f'load average before: {os.getloadavg()[0]:.1f}')
    print('\n| entry point | ' + ' | '.join(f'{t}: min / median s' for t in trees) + ' |')
    print('|---|' + '---|' * len(trees))
    found = imports(trees, args.runs)
    for name in ENTRY_POINTS:
        cells = [f'{min(found[name, t]):.2f} / {statistics.median(found[name, t]):.2f}'
                 for t in trees]
        print(f'| {name} | ' + ' | '.join(cells) + ' |')
    if args.deployments:
        print('\n| tree | daemons CPU s | the rest CPU s | in all |')
        print('|---|---|---|---|')
        for tree, runs in deployments(trees, args.deployments).items():
            for daemons, rest in runs:
                print(f'| {tree} | {daemons:.1f} | {rest:.1f} | {daemons + rest:.1f} |')
    print(f'\nload average after: {os.getloadavg()[0]:.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
