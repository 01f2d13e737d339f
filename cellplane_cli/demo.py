"""``cellplane demo``: the embedded control plane booting a few hundred instances, and what happened.

    cellplane demo [--instances 300] [--cells 2] [--hosts-per-cell 5]
                   [--failing-hosts 1] [--fail-fraction 0.05] [--seed 42]
                   [--drain HOST|auto|none] [--drain-parallel 5]
                   [--state-dir DIR] [--format table|json]

Progress goes to stderr (a tqdm bar, on a terminal only); the summary to stdout: a readable
report, or with ``--format json`` one JSON object and nothing else. After
the boots, one host is drained (``--drain``; by default the last host of
the last cell) and the report shows its moves. The
exit code is 0 when the boot flow kept its promises (allocations match the
ACTIVE instances, every failure has a reason, rescheduled instances left
their failing hosts), 1 otherwise. Service logs go to ``cellplane.log`` in
the state directory (kept only when ``--state-dir`` is given); the console
shows errors only, unless ``-v``.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from typing import TYPE_CHECKING

from cliff import command

from cellplane_cli import base

if TYPE_CHECKING:
    from tqdm import tqdm

LOG_FILE = 'cellplane.log'


def _scenario():
    """``cellplane_embedded.demo``, imported when the demo is asked for.

    It loads the whole embedded cloud (every service, Alembic, the fake
    driver): about a second of CPU that every other ``cellplane`` command
    would pay at its start if it were imported with this module.
    """
    from cellplane_embedded import demo
    return demo


class Demo(command.Command):
    """Boot instances on an embedded control plane (2 cells by default) with injected failures."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        defaults = _scenario().DemoOptions()
        parser.add_argument('--instances', type=base.bounded(int, minimum=1), default=defaults.instances,
                            help=f'instances to boot (default {defaults.instances})')
        parser.add_argument('--cells', type=base.bounded(int, minimum=1), default=defaults.cells,
                            help=f'cells (default {defaults.cells})')
        parser.add_argument('--hosts-per-cell', type=base.bounded(int, minimum=1), default=defaults.hosts_per_cell,
                            help=f'fake hosts in each cell, served by one hollow agent '
                                 f'per cell (default {defaults.hosts_per_cell})')
        parser.add_argument('--failing-hosts', type=base.bounded(int, minimum=0), default=defaults.failing_hosts,
                            help=f'hosts that fail every build: cell1-host1, then the '
                                 f'first host of the next cell, and so on (default '
                                 f'{defaults.failing_hosts}; 0: none)')
        parser.add_argument('--seed', type=int, default=defaults.seed,
                            help='seed of the requests and of the random build failures')
        parser.add_argument('--fail-fraction',
                            type=base.bounded(float, minimum=0, maximum=1), default=defaults.fail_fraction,
                            help=f'fraction of builds failing at random on every host but '
                                 f'the one that fails them all, each instance at most '
                                 f'once (default {defaults.fail_fraction})')
        parser.add_argument('--drain', metavar='HOST', default=defaults.drain,
                            help='the host drained (live) once the boots settled: a host '
                                 'name, auto (the last host of the last cell; the '
                                 'default) or none')
        parser.add_argument('--drain-parallel', type=base.bounded(int, minimum=1, maximum=100),
                            default=defaults.drain_parallel, metavar='N',
                            help=f'instances the drain moves at once (default '
                                 f'{defaults.drain_parallel})')
        parser.add_argument('--state-dir', metavar='DIR',
                            help='keep the SQLite databases and the log here '
                                 '(default: a temporary directory, removed)')
        parser.add_argument('--format', choices=('table', 'json'), default='table',
                            help='summary as a readable report or as one JSON object')
        return parser

    def take_action(self, parsed_args):
        from tqdm import tqdm
        options = _scenario().DemoOptions(
            instances=parsed_args.instances, cells=parsed_args.cells,
            hosts_per_cell=parsed_args.hosts_per_cell,
            failing_hosts=parsed_args.failing_hosts,
            seed=parsed_args.seed, fail_fraction=parsed_args.fail_fraction,
            state_dir=parsed_args.state_dir,
            drain=None if parsed_args.drain == 'none' else parsed_args.drain,
            drain_parallel=parsed_args.drain_parallel)
        options.check()
        with tempfile.TemporaryDirectory(prefix='cellplane-demo-log-') as scratch:
            log_dir = parsed_args.state_dir or scratch
            with _service_logs(os.path.join(log_dir, LOG_FILE), self.app.options.verbose_level):
                with tqdm(total=options.cells * options.hosts_per_cell, unit='host',
                          desc='starting', file=sys.stderr, leave=False,
                          disable=None) as start_bar, \
                        tqdm(total=options.instances + options.oversized, unit='instance',
                             desc='booting', file=sys.stderr, leave=False,
                             disable=None) as bar, \
                        tqdm(total=0, unit='instance', desc='draining', file=sys.stderr,
                             leave=False, disable=None) as drain_bar:
                    summary = _scenario().run_demo(
                        options, progress=lambda done, total: bar.update(done - bar.n),
                        drain_progress=lambda done, total: _advance(drain_bar, done, total),
                        start_progress=lambda done, total: _advance(start_bar, done, total))
        if parsed_args.format == 'json':
            self.app.stdout.write(json.dumps(summary, sort_keys=True) + '\n')
        else:
            self.app.stdout.write(render(summary))
        return 0 if kept_promises(summary) else 1


def _advance(bar: tqdm, done: int, total: int) -> None:
    if bar.total != total:
        bar.total = total
        bar.refresh()
    # update(0) redraws too (at most every 0.1 s): the time spent shows while
    # hosts register, which they do together, after a while.
    bar.update(done - bar.n)


def kept_promises(summary: dict) -> bool:
    return (summary['placement']['allocations_match_instances']
            and summary['every_failure_has_a_reason']
            and summary['rescheduled_away_from_failing_hosts']
            and summary['building'] == 0)


class _service_logs:
    """Service log lines to a file; the console keeps errors only (unless -v)."""

    def __init__(self, path: str, verbose_level: int) -> None:
        self._path = path
        self._quiet_console = verbose_level <= 1
        self._changed: list[tuple[logging.Handler, int]] = []

    def __enter__(self):
        os.makedirs(os.path.dirname(self._path), exist_ok=True)
        root = logging.getLogger()
        self._file = logging.FileHandler(self._path)
        self._file.setLevel(logging.INFO)
        self._file.setFormatter(logging.Formatter(
            '%(asctime)s %(levelname)s %(name)s %(message)s'))
        root.addHandler(self._file)
        self._root_level = root.level
        root.setLevel(min(root.level or logging.INFO, logging.INFO))
        if self._quiet_console:
            for handler in root.handlers:
                if handler is not self._file and isinstance(handler, logging.StreamHandler):
                    self._changed.append((handler, handler.level))
                    handler.setLevel(logging.ERROR)
        return self

    def __exit__(self, *exc_info):
        root = logging.getLogger()
        root.removeHandler(self._file)
        self._file.close()
        root.setLevel(self._root_level)
        for handler, level in self._changed:
            handler.setLevel(level)


# Beyond this many hosts, a per-host line names the busiest only.
HOSTS_LISTED = 12


def _counts(per_host: dict[str, int]) -> str:
    if len(per_host) <= HOSTS_LISTED:
        return ', '.join(f'{host} {n}' for host, n in per_host.items()) or 'none'
    busiest = sorted(per_host.items(), key=lambda item: (-item[1], item[0]))[:HOSTS_LISTED]
    values = sorted(per_host.values())
    return (f'{len(per_host)} hosts, {values[0]} to {values[-1]} each; busiest '
            + ', '.join(f'{host} {n}' for host, n in busiest))


def _failing(run: dict) -> str:
    hosts = run['failing_hosts']
    if not hosts:
        return 'no host fails every build'
    named = ', '.join(hosts[:HOSTS_LISTED]) + (', ...' if len(hosts) > HOSTS_LISTED else '')
    verb = 'fails' if len(hosts) == 1 else 'fail'
    return f'{named} {verb} every build ("{run["failing_host_reason"]}")'


def _drain_lines(drain: dict | None) -> list[str]:
    if drain is None:
        return []
    end = ('the host is empty' if drain['host_empty']
           else f'{drain["left_on_host"]} instance(s) left on it')
    lines = [f'Drained {drain["host"]} ({drain["mode"]}, {drain["parallel"]} at a time) in '
             f'{drain["seconds"]} s: {drain["moved"]} of {drain["instances"]} instances moved'
             + (f' ({_counts(drain["moved_to"])})' if drain['moved_to'] else '')
             + f'; {end}']
    for move in drain['moves'][:_scenario().MOVES_SHOWN]:
        lines.append(f'  {move["server"]} -> {move["to"]} in {move["seconds"]} s')
    if len(drain['moves']) > _scenario().MOVES_SHOWN:
        lines.append(f'  ... and {len(drain["moves"]) - _scenario().MOVES_SHOWN} more')
    for stayed in drain['not_moved_instances']:
        lines.append(f'  {stayed["result"]}: {stayed["server"]} ({stayed["uuid"]}): '
                     f'{stayed["reason"]}')
    lines.append('')
    return lines


def render(summary: dict) -> str:
    """The summary as the report a person reads."""
    run, placement, rescheduled = summary['run'], summary['placement'], summary['rescheduled']
    lines = [
        f'cellplane demo: {summary["instances"]} instances asked for on {run["cells"]} '
        f'cells x {run["hosts_per_cell"]} fake hosts (seed {run["seed"]})',
        f'  injected: {_failing(run)}; '
        f'other hosts fail {run["fail_fraction_elsewhere"]:.0%} at random (once per '
        f'instance at most); '
        f'{run["max_attempts"]} attempts per instance',
        f'  started in {run["startup_seconds"]} s; all settled in {run["boot_seconds"]} s '
        f'({run["instances_per_second"]} instances/s)',
        '',
        f'ACTIVE {summary["active"]}   ERROR {summary["error"]}   '
        f'still building {summary["building"]}',
        'Placed per cell: ' + ', '.join(
            f'{cell} {n}' for cell, n in summary['placed_per_cell'].items()),
        'ACTIVE per host: ' + _counts(summary['active_per_host']),
        '',
        f'Rescheduled: {rescheduled["instances"]} instances had a failed build '
        f'({rescheduled["ended_active"]} ended ACTIVE on an alternate, '
        f'{rescheduled["ended_error"]} ran out of alternates)',
    ]
    for reason, count in rescheduled['failed_builds_by_reason'].items():
        lines.append(f'  {count:4d} failed builds: {reason}')
    lines.append('  failed builds per host: '
                 + _counts(rescheduled['failed_builds_by_host']))
    lines.append('')
    lines.append(f'Failed: {summary["error"]} instances in ERROR')
    for reason, count in summary['failed']['by_reason'].items():
        lines.append(f'  {count:4d} x {reason}')
    lines.append('')
    lines.extend(_drain_lines(summary.get('drain')))
    match = placement['allocations_match_instances']
    lines.append(
        f'Placement: {placement["consumers_with_allocations"]} consumers hold allocations, '
        f'{placement["active_instances"]} instances are ACTIVE: '
        + ('they MATCH (each on its own host, usage = sum of the flavors)' if match
           else 'they DO NOT MATCH'))
    lines.append('  usage ' + ', '.join(f'{rc} {n}' for rc, n in placement['usage'].items())
                 + '; flavors of ACTIVE instances ' + ', '.join(
                     f'{rc} {n}' for rc, n in placement['sum_of_active_flavors'].items()))
    for problem in placement['problems']:
        lines.append(f'  problem: {problem}')
    lines.append(f'Every failure has a reason: '
                 f'{"yes" if summary["every_failure_has_a_reason"] else "NO"}; '
                 f'rescheduled instances left their failing hosts: '
                 f'{"yes" if summary["rescheduled_away_from_failing_hosts"] else "NO"}')
    if run['state_dir']:
        lines.append(f'State and log kept in {run["state_dir"]}')
    return '\n'.join(lines) + '\n'
