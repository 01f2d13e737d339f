"""``cellplane server migrate|resize [confirm|revert]|live-migrate|live-migration abort|evacuate|migration list|show``.

Each move command prints the server's migration (``--format json`` as
every command); with ``--wait`` it polls until the move settles: a
migrate or resize until its migration is ``finished`` (VERIFY_RESIZE:
confirm or revert it) or over, a confirm or revert until the migration is
``confirmed`` or ``reverted``, a live migration or an evacuation until
``done`` or ``failed``, an abort until the live migration is ``cancelled``
(or, the abort too late, ``done``). A move that ended in ``error`` or
``failed``, or an abort that came too late, exits 1 with the reason on
stderr; ``--timeout`` seconds passed exits 1 too.
"""
from __future__ import annotations

import argparse
import time

from cliff import lister, show
from tqdm import tqdm

from cellplane.context import new_context
from cellplane.objects import migrations
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import TransportCache, get_transport
from cellplane_api import moves, servers
from cellplane_cli import base
from cellplane_cli.server_commands import WAIT_POLL_SECONDS, WaitTimedOut, _TopLevelCommand
from compute_agent.rpcapi import ComputeAPI
from conductor.super.rpcapi import SuperConductorAPI

COLUMNS = ('id', 'server', 'type', 'status', 'source_host', 'dest_host', 'old_flavor',
           'new_flavor', 'cell', 'error', 'created_at', 'updated_at')
LIST_COLUMNS = ('id', 'server', 'type', 'status', 'source_host', 'dest_host', 'old_flavor',
                'new_flavor', 'updated_at')


def _row(found: moves.CellMigration, columns=COLUMNS) -> tuple:
    m = found.migration
    values = {'id': m.uuid, 'server': m.instance_uuid, 'type': m.migration_type,
              'status': m.status, 'source_host': m.source_host, 'dest_host': m.dest_host,
              'old_flavor': m.old_flavor.name, 'new_flavor': m.new_flavor.name,
              'cell': found.cell, 'error': m.error, 'created_at': base.iso8601(m.created_at),
              'updated_at': base.iso8601(m.updated_at)}
    return tuple(values[c] for c in columns)


def _status(text: str) -> str:
    if text not in migrations.STATUSES:
        raise argparse.ArgumentTypeError(
            f'unknown migration status {text!r} (one of {", ".join(migrations.STATUSES)})')
    return text


class _MoveCommand(_TopLevelCommand, show.ShowOne):
    """A move asked of one server; prints its migration."""

    # The statuses --wait waits for.
    settled: frozenset = moves.SETTLED

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='SERVER',
                            help='server id, or name (refused if several have it)')
        parser.add_argument('--wait', action='store_true',
                            help='wait until the move settles (see the command help)')
        parser.add_argument('--timeout', type=base.bounded(float, minimum=0), default=300.0,
                            metavar='SECONDS',
                            help='give up waiting after this long (default 300)')
        return parser

    def run(self, parsed_args):
        self._error = None
        code = super().run(parsed_args)
        if self._error:
            self.app.stderr.write(f'{self._error}\n')
            return 1
        return code

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        raise NotImplementedError

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            self.conf = conf
            timeout = conf.cells.read_timeout
            uuid = servers.find(engine, cells, parsed_args.server, cell_timeout=timeout)
            transport = get_transport(rpc_options.require_transport_url(conf, 'cellplane'),
                                      conf)
            try:
                migration = self.ask(engine, cells, SuperConductorAPI(transport, conf=conf),
                                     new_context(), uuid, parsed_args)
            finally:
                transport.cleanup()
            found = moves.show_migration(engine, cells, migration.uuid)
            if parsed_args.wait:
                found = self._wait(engine, cells, migration.uuid, parsed_args.timeout)
        if found.migration.status in (migrations.ERROR, migrations.FAILED):
            self._error = (f'the move of server {uuid} failed: {found.migration.error}')
        return COLUMNS, _row(found)

    def _wait(self, engine, cells, migration_uuid: str,
              timeout: float) -> moves.CellMigration:
        deadline = time.monotonic() + timeout
        with tqdm(total=1, desc=f'migration {migration_uuid[:8]}', unit='move',
                  file=self.app.stderr, disable=None) as bar:
            while True:
                found = moves.show_migration(engine, cells, migration_uuid)
                bar.set_postfix_str(found.migration.status)
                if found.migration.status in self.settled:
                    bar.update(1)
                    return found
                if time.monotonic() > deadline:
                    raise WaitTimedOut(
                        f'migration {migration_uuid} is still {found.migration.status} '
                        f'after {timeout:g} s; see `cellplane server migration show '
                        f'{migration_uuid}`')
                time.sleep(WAIT_POLL_SECONDS)


class ServerMigrate(_MoveCommand):
    """Cold-migrate a server to another host of its cell (the scheduler chooses, with alternates).

    It then waits in VERIFY_RESIZE: ``server resize confirm`` or ``revert``.
    """

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        return moves.migrate(engine, cells, conductor, ctxt, uuid)


class ServerResize(_MoveCommand):
    """Resize a server to another flavor (on another host of its cell, with alternates).

    It then waits in VERIFY_RESIZE: ``server resize confirm`` or ``revert``.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--flavor', required=True, help='the new flavor, name or id')
        return parser

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        return moves.migrate(engine, cells, conductor, ctxt, uuid,
                             flavor=parsed_args.flavor)


class ServerResizeConfirm(_MoveCommand):
    """Confirm a server's finished migration or resize: its source host's allocation is freed."""

    settled = migrations.FINAL

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        return moves.confirm(engine, cells, conductor, ctxt, uuid)


class ServerResizeRevert(_MoveCommand):
    """Revert a server's finished migration or resize: back on its source, at its old flavor."""

    settled = migrations.FINAL

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        return moves.revert(engine, cells, conductor, ctxt, uuid)


class ServerLiveMigrate(_MoveCommand):
    """Live-migrate a server to another host of its cell (``--host``, or the scheduler's choice).

    The server stays ACTIVE (MIGRATING while it moves); the migration ends
    ``done`` (its source freed at the switch-over) or ``failed`` (still on
    its source, the reason in the migration's error).
    """

    settled = migrations.FINAL

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--host', help='the destination host (claimed, or refused '
                                           'with the reason); default: the scheduler\'s')
        return parser

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        return moves.live_migrate(engine, cells, conductor, ctxt, uuid,
                                  host=parsed_args.host)


class ServerEvacuate(_MoveCommand):
    """Evacuate a server off its dead host: rebuild it on another host of its cell.

    Only a server whose host's compute service is down (forced down with
    ``cellplane-manage service force-down``, or silent for
    ``[service] service_down_time``) is evacuated; otherwise it is refused
    with the reason. The scheduler chooses the host, with alternates
    (``--host`` names it, still claimed through the scheduler). The
    migration ends ``done`` (ACTIVE on its new host; the dead host's
    allocation stays on the migration until that host comes back and
    destroys its copy) or ``failed`` (no host could take it: the server is
    ERROR, its fault naming every host tried and why).
    """

    settled = migrations.FINAL

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--host', help='the destination host (claimed, or refused '
                                           'with the reason); default: the scheduler\'s')
        return parser

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        return moves.evacuate(engine, cells, conductor, ctxt, uuid, host=parsed_args.host,
                              service_down_time=self.conf.service.service_down_time)


class ServerLiveMigrationAbort(_MoveCommand):
    """Abort a server's live migration: it stays ACTIVE on its source, with its own allocation.

    MIGRATION (uuid or id) defaults to the server's live migration in
    progress. Aborted while queued, it is cancelled at once; later, its
    source stops the copy (or refuses to begin it) and the migration ends
    ``cancelled``. An abort that reaches the source after the copy ended is
    too late: the migration ends ``done``, and the command says so (exit 1).
    """

    settled = migrations.FINAL

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('migration', metavar='MIGRATION', nargs='?',
                            help='migration uuid or id (default: the live migration in '
                                 'progress)')
        return parser

    def take_action(self, parsed_args):
        columns, row = super().take_action(parsed_args)
        status = row[COLUMNS.index('status')]
        if parsed_args.wait and status == migrations.DONE:
            self._error = (f'the abort came too late: migration {row[0]} switched over to '
                           f'{row[COLUMNS.index("dest_host")]}')
        return columns, row

    def ask(self, engine, cells, conductor, ctxt, uuid, parsed_args):
        migration = moves.live_migration_asked(engine, cells, uuid, parsed_args.migration)
        conf = self.conf
        transports = TransportCache(conf)
        try:
            moves.abort_live_migration(
                engine, cells, lambda cell: ComputeAPI(transports.get(cell.transport_url),
                                                       conf=conf),
                ctxt, uuid, migration.id)
        finally:
            transports.cleanup()
        return migration


class ServerMigrationList(base.SaysWhatItFound, _TopLevelCommand, lister.Lister):
    """List migrations (cold migrations and resizes), of every cell or of one server."""

    nothing = 'no migrations'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--server', metavar='SERVER',
                            help='only this server\'s (id, or name)')
        parser.add_argument('--status', type=_status, action='append', metavar='STATUS',
                            help=f'only migrations in this status (repeatable; '
                                 f'{", ".join(migrations.STATUSES)})')
        return parser

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            uuid = None
            if parsed_args.server is not None:
                uuid = servers.find(engine, cells, parsed_args.server,
                                    cell_timeout=conf.cells.read_timeout)
            found = moves.list_migrations(engine, cells, instance_uuid=uuid,
                                          statuses=parsed_args.status)
        return LIST_COLUMNS, [_row(f, LIST_COLUMNS) for f in found]


class ServerMigrationShow(_TopLevelCommand, show.ShowOne):
    """Show one migration: its status, source and destination, flavors, and its error."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('migration', metavar='MIGRATION', help='migration id')
        return parser

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            return COLUMNS, _row(moves.show_migration(engine, cells, parsed_args.migration))


COMMANDS = {'server migrate': ServerMigrate, 'server resize': ServerResize,
            'server resize confirm': ServerResizeConfirm,
            'server resize revert': ServerResizeRevert,
            'server live-migrate': ServerLiveMigrate,
            'server evacuate': ServerEvacuate,
            'server live-migration abort': ServerLiveMigrationAbort,
            'server migration list': ServerMigrationList,
            'server migration show': ServerMigrationShow}
