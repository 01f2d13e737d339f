"""``cellplane-manage service list|disable|enable``: every service, up or down.

``disable`` takes a compute host out of scheduling and ``enable`` puts it back.

Top-level services (schedulers, super conductors) heartbeat into the API
database; a cell's conductor and compute agents into that cell's database.
The columns are Nova's: ``status`` is enabled or disabled (``service
disable``), ``state`` is up or down: a service is up when its last
heartbeat (``updated_at``, ISO 8601 UTC) is younger than ``[service]
service_down_time``. ``zone`` is a compute host's availability zone, read as
the compute API's os-services reads it (``cellplane_api/availability_zones.py``:
its aggregate's, else its agent's, else ``[DEFAULT] default_availability_zone``),
``[DEFAULT] internal_service_availability_zone`` for the others.
The cells are read at the same time, each bounded by ``[cells]
read_timeout``: a cell that cannot be read gets one row saying so and why,
and the others are listed all the same.

``service disable HOST --reason TEXT`` marks the compute service of HOST
disabled in its cell's database (the scheduler's ComputeFilter skips it,
naming the reason) and puts ``COMPUTE_STATUS_DISABLED`` on its providers in
Placement, so that Placement no longer offers it at all (``cellplane/traits.py``);
``service enable HOST`` undoes both. Instances on the host stay where they
are. When Placement cannot be updated the command says so and exits 1
(the database change is kept): run it again. The change is the compute
API's ``os-services`` one (``cellplane_api/compute_services.py``).
``service force-down HOST [--unset]`` is Nova's force-down: the host is
down (the scheduler skips it, the cell conductor reschedules its builds)
whatever its heartbeats say, until it is unset.
"""
from __future__ import annotations

from cliff import lister, show

from cellplane.cells.databases import CellDatabases
from cellplane.objects import compute_nodes, services
from cellplane.traits import COMPUTE_STATUS_DISABLED
from cellplane_api import compute_services
from cellplane_api import conf as api_conf
from cellplane_api.availability_zones import Zones
from cellplane_cli import base
from cellplane_cli.databases import engine_for
from placement import client_conf

TOP_LEVEL = '(top)'
# Nova's columns (``openstack compute service list``), then where the row is
# kept (the id is a row of that database) and the service's RPC version.
COLUMNS = ('id', 'binary', 'host', 'zone', 'status', 'state', 'updated_at',
           'disabled_reason', 'cell', 'version')


def _rows(cell: str, found: list[dict], service_down_time: float,
          zones: Zones) -> list[tuple]:
    return [(r['id'], r['binary'], r['host'], zones.of(r['binary'], r['host']),
             'disabled' if r['disabled'] else 'enabled',
             'up' if services.is_up(r, service_down_time=service_down_time) else 'down',
             base.iso8601(r['last_seen_at']), r['disabled_reason'], cell, r['version'])
            for r in found]


class ServiceList(base.ConfigOptionsMixin, lister.Lister):
    """List every service of the top level and of every cell, with its last heartbeat."""

    registrars = (api_conf.register_opts,)

    def get_parser(self, prog_name):
        return self.add_config_arguments(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        conf = self.load_config(parsed_args)
        down_time = conf.service.service_down_time
        api_engine = engine_for(conf, 'api')
        cells = CellDatabases(api_engine)
        try:
            found = compute_services.locate(api_engine, cells, conf.cells.read_timeout)
            readable = {id(one.engine): one.engine for one in found.services
                        if one.cell is not None}
            zones = Zones.read(api_engine, readable.values(),
                               default=conf.default_availability_zone,
                               internal=conf.internal_service_availability_zone)
            rows = []
            for one in found.services:
                rows.extend(_rows(one.cell.name if one.cell else TOP_LEVEL, [one.row],
                                  down_time, zones))
            for mapping, error in found.unread.values():
                reason = (str(error).splitlines() or [''])[0]
                rows.append((None, None, None, None, None,
                             f'unknown: the cell database cannot be read '
                             f'({type(error).__name__}: {reason})',
                             None, None, mapping.name, None))
        finally:
            cells.dispose()
            api_engine.dispose()
        return COLUMNS, rows


class ServiceNotFound(LookupError):
    """No cell, or several, has the compute service of the host named."""


def compute_service_of(api_engine, cells: CellDatabases, host: str, cell_name: str | None,
                       timeout: float) -> compute_services.Located:
    """The compute service of ``host`` (in cell ``cell_name`` when given); ``ServiceNotFound`` if none or several."""
    if cell_name is not None and cell_name not in {m.name for m in cells.reload()}:
        raise ServiceNotFound(f'no cell named {cell_name!r}')
    found = compute_services.locate(api_engine, cells, timeout, top_level=False,
                                    cell_names=None if cell_name is None else {cell_name})
    having = [one for one in found.services
              if one.row['host'] == host and one.row['binary'] == compute_nodes.COMPUTE_BINARY]
    if len(having) == 1:
        return having[0]
    if having:
        raise ServiceNotFound(f'host {host} has a compute service in several cells '
                              f'({", ".join(sorted(one.cell.name for one in having))}): '
                              f'give --cell')
    unread = sorted(mapping.name for mapping, _ in found.unread.values())
    unread_note = f' (cells not read: {", ".join(unread)})' if unread else ''
    raise ServiceNotFound(f'no compute service on host {host} in any cell{unread_note}; '
                          f'see `cellplane-manage service list`')


SET_COLUMNS = ('host', 'binary', 'cell', 'disabled', 'disabled_reason', 'placement')


class _ServiceSet(base.ConfigOptionsMixin, show.ShowOne):
    """Disable or enable one compute service (in its cell DB and in Placement)."""

    registrars = (api_conf.register_opts, client_conf.register_opts)
    disable = True

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        parser.add_argument('host', help='the compute host')
        parser.add_argument('--cell', metavar='NAME',
                            help='the cell of the host (default: the one that has it)')
        return parser

    def take_action(self, parsed_args):
        conf = self.load_config(parsed_args)
        reason = getattr(parsed_args, 'reason', None)
        if self.disable and reason is not None and not reason.strip():
            raise ValueError('--reason must not be blank')
        placement = client_conf.client_from_conf(
            conf, f'cellplane-manage service {"disable" if self.disable else "enable"}')
        api_engine = engine_for(conf, 'api')
        cells = CellDatabases(api_engine)
        try:
            one = self._service_of(api_engine, cells, parsed_args.host, parsed_args.cell,
                                   conf.cells.read_timeout)
            changed = compute_services.set_disabled(api_engine, one, disabled=self.disable,
                                                    reason=reason, placement=placement)
        finally:
            cells.dispose()
            api_engine.dispose()
        if changed.placement_error is None:
            said = (f'{COMPUTE_STATUS_DISABLED} {"set on" if self.disable else "removed from"} '
                    f'{changed.providers} provider(s)'
                    + ('' if changed.placement_changed else ' (already so)'))
            self.failed = None
        else:
            exc = changed.placement_error
            said = (f'not updated ({type(exc).__name__}: {exc}); the database change '
                    f'is kept: run the command again')
            self.failed = said
        row = changed.service.row
        return SET_COLUMNS, (row['host'], row['binary'], changed.service.cell.name,
                             bool(row['disabled']), row['disabled_reason'], said)

    def run(self, parsed_args):
        code = super().run(parsed_args)
        if getattr(self, 'failed', None):
            self.app.stderr.write(f'Placement {self.failed}\n')
            return 1
        return code

    def _service_of(self, api_engine, cells: CellDatabases, host: str, cell_name: str | None,
                    timeout: float) -> compute_services.Located:
        return compute_service_of(api_engine, cells, host, cell_name, timeout)


class ServiceForceDown(_ServiceSet):
    """Say a compute host is down whatever its heartbeats say (Nova's force-down: fence it before
    moving its work); ``--unset`` lifts it. Placement is not touched."""

    FORCE_COLUMNS = ('host', 'binary', 'cell', 'forced_down', 'state')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--unset', action='store_true',
                            help='lift the force-down: the heartbeats say again')
        return parser

    def take_action(self, parsed_args):
        conf = self.load_config(parsed_args)
        api_engine = engine_for(conf, 'api')
        cells = CellDatabases(api_engine)
        try:
            one = self._service_of(api_engine, cells, parsed_args.host, parsed_args.cell,
                                   conf.cells.read_timeout)
            changed = compute_services.set_forced_down(api_engine, one,
                                                       forced_down=not parsed_args.unset)
        finally:
            cells.dispose()
            api_engine.dispose()
        self.failed = None
        row = changed.service.row
        up = services.is_up(row, service_down_time=conf.service.service_down_time)
        return self.FORCE_COLUMNS, (row['host'], row['binary'], changed.service.cell.name,
                                    bool(row['forced_down']), 'up' if up else 'down')


class ServiceDisable(_ServiceSet):
    """Take a compute host out of scheduling: disabled in its cell and in Placement (its instances stay)."""

    disable = True

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--reason', metavar='TEXT',
                            help='why (shown by service list and in NoValidHost reasons)')
        return parser


class ServiceEnable(_ServiceSet):
    """Put a disabled compute host back into scheduling."""

    disable = False
