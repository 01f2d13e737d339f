"""``cellplane-manage``: operator commands that act on databases directly.

    cellplane-manage db sync --database api|cell|placement --config-file F
    cellplane-manage db version --database ... [--format json]
    cellplane-manage cell create --name N --transport-url U --database-connection D --config-file top.conf
    cellplane-manage cell list|show|delete|discover-hosts ... [--format json]
    cellplane-manage rpc ping --topic T [--server HOST] [--cell NAME] ... [--format json]
    cellplane-manage scheduler purge-records [--keep N] --config-file top.conf
    cellplane-manage service list --config-file top.conf [--format json]
    cellplane-manage service disable HOST [--reason TEXT] [--cell NAME] --config-file top.conf
    cellplane-manage service enable HOST [--cell NAME] --config-file top.conf
    cellplane-manage service force-down HOST [--unset] [--cell NAME] --config-file top.conf
    cellplane-manage host drain HOST [--live | --cold] [--parallel N] [--deadline S] --config-file top.conf [-f json]
    cellplane-manage host undrain HOST --config-file top.conf
    cellplane-manage placement audit [--fix] [--grace S] --config-file top.conf [--format json]
    cellplane-manage failure-domain record-levels --config-file top.conf [--format json]

Which connection each database uses comes from the config files:
``[api_database] connection``, ``[database] connection`` (the cell database)
or ``[placement_database] connection``.
"""
from __future__ import annotations

import sys
from urllib.parse import urlsplit, urlunsplit

from cliff import command, lister, show

from cellplane.cells.databases import CellDatabases
from cellplane.db import migrate
from cellplane.objects import cell_mappings, compute_nodes, host_mappings
from cellplane_cli import base
from cellplane_cli.databases import engine_for
from cellplane_cli.failure_domain_commands import MANAGE_COMMANDS as FAILURE_DOMAIN_COMMANDS
from cellplane_cli.host_commands import COMMANDS as HOST_COMMANDS
from cellplane_cli.placement_commands import PlacementAudit
from cellplane_cli.rpc_commands import RpcPing
from cellplane_cli.service_commands import (
    ServiceDisable,
    ServiceEnable,
    ServiceForceDown,
    ServiceList,
)


def _placement_registrar(conf):
    from placement import conf as placement_conf
    placement_conf.register_opts(conf)


def mask_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f':{parts.password}@', ':***@', 1)
        return urlunsplit(parts._replace(netloc=netloc))
    return url


class _DbCommand(base.ConfigOptionsMixin):
    registrars = (_placement_registrar,)

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        parser.add_argument('--database', required=True, choices=sorted(migrate.HISTORIES),
                            help='which database')
        return parser


class DbSync(_DbCommand, command.Command):
    """Create or upgrade a database schema to the newest revision."""

    def take_action(self, parsed_args):
        engine = engine_for(self.load_config(parsed_args), parsed_args.database, chosen=True)
        migrate.sync(parsed_args.database, engine)
        self.app.stdout.write(f'{parsed_args.database} database at revision '
                              f'{migrate.current_revision(parsed_args.database, engine)}\n')
        return 0


class DbVersion(_DbCommand, show.ShowOne):
    """Show a database's schema revision and the newest one this code knows."""

    def take_action(self, parsed_args):
        engine = engine_for(self.load_config(parsed_args), parsed_args.database, chosen=True)
        current = migrate.current_revision(parsed_args.database, engine)
        head = migrate.head_revision(parsed_args.database, engine)
        return (('database', 'current', 'head', 'up_to_date'),
                (parsed_args.database, current, head, current == head))


class _CellCommand(base.ConfigOptionsMixin):
    def get_parser(self, prog_name):
        return self.add_config_arguments(super().get_parser(prog_name))

    def api_engine(self, parsed_args):
        return engine_for(self.load_config(parsed_args), 'api')


_CELL_COLUMNS = ('uuid', 'name', 'transport_url', 'database_connection', 'disabled')


def _cell_row(m: cell_mappings.CellMapping):
    return (m.uuid, m.name, mask_password(m.transport_url),
            mask_password(m.database_connection), m.disabled)


class CellCreate(_CellCommand, show.ShowOne):
    """Map a new cell: its name, message bus and database."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--name', required=True)
        parser.add_argument('--transport-url', required=True,
                            help="the cell's RabbitMQ URL (its own vhost)")
        parser.add_argument('--database-connection', required=True,
                            help="the cell database's SQLAlchemy URL")
        parser.add_argument('--uuid', help='a fixed uuid (default: a new one)')
        return parser

    def take_action(self, parsed_args):
        mapping = cell_mappings.create(
            self.api_engine(parsed_args), name=parsed_args.name,
            transport_url=parsed_args.transport_url,
            database_connection=parsed_args.database_connection,
            uuid=parsed_args.uuid)
        return _CELL_COLUMNS, _cell_row(mapping)


class CellList(base.SaysWhatItFound, _CellCommand, lister.Lister):
    """List the mapped cells (passwords masked)."""

    nothing = 'no cells mapped (cellplane-manage cell create)'

    def take_action(self, parsed_args):
        return _CELL_COLUMNS, [_cell_row(m) for m in cell_mappings.list_all(self.api_engine(parsed_args))]


class CellShow(_CellCommand, show.ShowOne):
    """Show one cell by name or uuid (passwords masked)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cell', help='name or uuid')
        return parser

    def take_action(self, parsed_args):
        return _CELL_COLUMNS, _cell_row(cell_mappings.get(self.api_engine(parsed_args), parsed_args.cell))


class CellDelete(_CellCommand, command.Command):
    """Delete a cell mapping that no host or instance maps to (--force: unmap its hosts first)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('cell', help='name or uuid')
        parser.add_argument('--force', action='store_true',
                            help='unmap the hosts mapped to the cell first '
                                 '(instances still refuse the delete)')
        return parser

    def take_action(self, parsed_args):
        cell_mappings.delete(self.api_engine(parsed_args), parsed_args.cell,
                             force=parsed_args.force)
        return 0


class CellDiscoverHosts(base.SaysWhatItFound, _CellCommand, lister.Lister):
    """Map every compute host of every cell that is not mapped yet (as the scheduler's refresh does)."""

    def summary(self, parsed_args, rows):
        return (f'{base.count(len(rows), "new host")} mapped; {self._seen} compute '
                f'host(s) found in {base.count(self._cells, "cell")}')

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        cells = CellDatabases(engine)
        mapped = []
        self._seen = self._cells = 0
        try:
            for mapping in cells.reload():
                self._cells += 1
                hosts = {n.host for n in compute_nodes.list_with_service(
                    cells.engine(mapping.uuid))}
                self._seen += len(hosts)
                with engine.begin() as conn:
                    new = host_mappings.map_hosts(
                        conn, cell_mappings.id_of(conn, mapping.uuid), hosts)
                mapped += [(mapping.name, host) for host in new]
        finally:
            cells.dispose()
            engine.dispose()
        return ('cell', 'host'), mapped


def _scheduler_registrar(conf):
    from scheduler import conf as scheduler_conf
    scheduler_conf.register_opts(conf)


class SchedulerPurgeRecords(base.ConfigOptionsMixin, show.ShowOne):
    """Delete all but the newest scheduling records in the API database."""

    registrars = (_scheduler_registrar,)

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        parser.add_argument('--keep', type=base.bounded(int, minimum=0), metavar='N',
                            help='records to keep (default [scheduler] records_retention)')
        return parser

    def take_action(self, parsed_args):
        from scheduler.records import database as record_database
        conf = self.load_config(parsed_args)
        keep = conf.scheduler.records_retention if parsed_args.keep is None \
            else parsed_args.keep
        if keep < 0:
            raise ValueError(f'--keep must be 0 or more, not {keep}')
        engine = engine_for(conf, 'api')
        try:
            deleted = record_database.purge(engine, keep)
        finally:
            engine.dispose()
        return ('kept_at_most', 'deleted'), (keep, deleted)


class ManageApp(base.CellplaneApp):
    NAME = 'cellplane-manage'

    def __init__(self):
        super().__init__(
            description='Operator commands acting on cellplane databases.',
            commands={'db sync': DbSync, 'db version': DbVersion,
                      'cell create': CellCreate, 'cell list': CellList,
                      'cell show': CellShow, 'cell delete': CellDelete,
                      'cell discover-hosts': CellDiscoverHosts,
                      'rpc ping': RpcPing,
                      'scheduler purge-records': SchedulerPurgeRecords,
                      'service list': ServiceList,
                      'service disable': ServiceDisable,
                      'service enable': ServiceEnable,
                      'service force-down': ServiceForceDown,
                      'placement audit': PlacementAudit,
                      **HOST_COMMANDS,
                      **FAILURE_DOMAIN_COMMANDS})


def main(argv: list[str] | None = None) -> int:
    return base.run(ManageApp, argv)


if __name__ == '__main__':
    sys.exit(main())
