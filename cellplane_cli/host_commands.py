"""``cellplane-manage host drain|undrain``: empty a compute host for maintenance, and put it back.

``host drain HOST`` disables the host's compute service (reason
``draining``) and moves every instance off it, ``--parallel`` at a time,
by live migration (the default) or ``--cold`` migration, each confirmed
by the drain (``cellplane_api/host_drain.py``). A progress bar is drawn on
stderr when it is a terminal; the table (or ``--format json``) lists each
instance: where it went and in how many seconds, or why it did not move.
The exit status is 0 when the host is empty, 1 when something is left on
it, 2 for a bad argument or a host no cell has. ``host undrain HOST`` is
``service enable HOST``.
"""
from __future__ import annotations

from cliff import lister
from tqdm import tqdm

from cellplane.context import new_context
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane_api import host_drain
from cellplane_cli import base
from cellplane_cli.server_commands import _TopLevelCommand
from cellplane_cli.service_commands import ServiceEnable, ServiceNotFound, compute_service_of
from conductor.super.rpcapi import SuperConductorAPI
from placement import client_conf

COLUMNS = ('server', 'name', 'result', 'dest_host', 'seconds', 'migration', 'reason')


class UnknownHost(ServiceNotFound):
    """The host to drain has no compute service in any cell: a usage error."""

    exit_code = 2


def _row(outcome: host_drain.Outcome) -> tuple:
    return (outcome.instance_uuid, outcome.name, outcome.result, outcome.dest_host,
            outcome.seconds, outcome.migration_uuid, outcome.reason)


def _named(left: list[dict]) -> str:
    return ', '.join(f'{r["display_name"]} ({r["uuid"]})' if r['display_name'] else r['uuid']
                     for r in left)


class HostDrain(base.SaysWhatItFound, _TopLevelCommand, lister.Lister):
    """Disable a compute host and move every instance off it (live by default, or --cold).

    Exit status: 0 when the host is empty at the end; 1 when some instance
    is left on it (it could not move, or --deadline passed first: the table
    says which and why); 2 for a bad argument or an unknown host. The host
    stays disabled (reason "draining") until `host undrain`. A cold
    migration started by a drain is confirmed by the drain: its source is
    freed at once.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', metavar='HOST', help='the compute host to empty')
        parser.add_argument('--cell', metavar='NAME',
                            help='the cell of the host (default: the one that has it)')
        how = parser.add_mutually_exclusive_group()
        how.add_argument('--live', dest='mode', action='store_const', const=host_drain.LIVE,
                         help='live-migrate each instance (the default): it keeps running')
        how.add_argument('--cold', dest='mode', action='store_const', const=host_drain.COLD,
                         help='cold-migrate each instance (stopped, moved, started; '
                              'confirmed by the drain)')
        parser.add_argument('--parallel', type=base.bounded(int, minimum=1, maximum=100),
                            default=1, metavar='N',
                            help='instances moved at once (default 1)')
        parser.add_argument('--deadline', type=base.bounded(float, minimum=0),
                            metavar='SECONDS',
                            help='start no move after this many seconds; the moves in '
                                 'flight are waited for, the rest reported as left '
                                 '(default: none)')
        parser.add_argument('--move-timeout', type=base.bounded(float, minimum=1),
                            default=host_drain.DEFAULT_MOVE_TIMEOUT, metavar='SECONDS',
                            help=f'stop waiting for one move after this long (it goes on '
                                 f'by itself; default {host_drain.DEFAULT_MOVE_TIMEOUT:g})')
        return parser

    def summary(self, parsed_args, rows):
        report = self._report
        counts = {result: sum(1 for o in report.outcomes if o.result == result)
                  for result in (host_drain.MOVED, host_drain.NOT_MOVED,
                                 host_drain.NOT_STARTED, host_drain.GONE)}
        said = ', '.join(f'{n} {result}' for result, n in counts.items() if n) or 'no instance'
        end = ('the host is empty' if report.empty else
               f'{base.count(len(report.left), "instance")} left on it: {_named(report.left)}')
        return (f'host {report.host} ({report.cell}) drained ({report.mode}) in '
                f'{report.seconds:g} s: {said}; {end}. It stays disabled until '
                f'`cellplane-manage host undrain {report.host}`')

    def run(self, parsed_args):
        self._report = None
        code = super().run(parsed_args)
        if code == 0 and self._report is not None and not self._report.empty:
            self.app.stderr.write(f'host {self._report.host} is not empty: '
                                  f'{_named(self._report.left)}\n')
            return 1
        return code

    def take_action(self, parsed_args):
        mode = parsed_args.mode or host_drain.LIVE
        with self.api(parsed_args) as (conf, engine, cells):
            try:
                one = compute_service_of(engine, cells, parsed_args.host, parsed_args.cell,
                                         conf.cells.read_timeout)
            except ServiceNotFound as exc:
                raise UnknownHost(str(exc)) from None
            placement = client_conf.client_from_conf(conf, 'cellplane-manage host drain')
            transport = get_transport(rpc_options.require_transport_url(conf, 'cellplane'),
                                      conf)
            try:
                drain = host_drain.HostDrain(
                    engine, cells, SuperConductorAPI(transport, conf=conf), new_context(),
                    one, placement=placement, mode=mode, parallel=parsed_args.parallel,
                    deadline=parsed_args.deadline, move_timeout=parsed_args.move_timeout)
                with tqdm(total=0, desc=f'draining {parsed_args.host}', unit='instance',
                          file=self.app.stderr, disable=None) as bar:
                    self._report = drain.run(progress=lambda done, total: _advance(
                        bar, done, total))
            finally:
                transport.cleanup()
        if drain.disabled.placement_error is not None:
            exc = drain.disabled.placement_error
            self.app.stderr.write(f'Placement was not told the host is disabled '
                                  f'({type(exc).__name__}: {exc}); the scheduler skips it '
                                  f'all the same (its service is disabled)\n')
        return COLUMNS, [_row(o) for o in self._report.outcomes]


def _advance(bar: tqdm, done: int, total: int) -> None:
    if bar.total != total:
        bar.total = total
        bar.refresh()
    bar.update(done - bar.n)


class HostUndrain(ServiceEnable):
    """Put a drained host back into scheduling: the same as `service enable HOST`."""


COMMANDS = {'host drain': HostDrain, 'host undrain': HostUndrain}
