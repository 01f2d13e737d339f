"""``cellplane server create|list|show|events|delete``: the API role's server commands.

They read ``[api_database] connection`` and ``[DEFAULT] transport_url`` (the
top-level bus) from the top-level config file; cells are reached through
their mappings. Every command has table and ``--format json`` output (cliff).
``server create --wait`` shows a progress bar until every instance is
ACTIVE or ERROR, or ``--timeout`` seconds pass (exit code 1 then).
``server show`` joins the instance (its cell: state, fault, every build
attempt) with its newest scheduling record (top level, from
``[scheduler] record_backend``), read when it is shown.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import getpass
import re
import time

import yaml
from cliff import command, lister, show
from tqdm import tqdm

from cellplane.cells.databases import CellDatabases
from cellplane.context import new_context
from cellplane.db import engines
from cellplane.objects.cell_mappings import CellMapping
from cellplane.objects.instance_actions import AttemptEvent
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import TransportCache, get_transport
from cellplane_api import conf as api_conf
from cellplane_api import quota_drivers, quotas, scheduler_hints, servers
from cellplane_cli import base, databases
from compute_agent.rpcapi import ComputeAPI
from conductor.super.rpcapi import SuperConductorAPI
from placement import client_conf
from scheduler import conf as scheduler_conf
from scheduler.records.backend import RecordBackendError, RecordQuery
from scheduler.records.loading import load_backend

WAIT_POLL_SECONDS = 0.5
LIST_COLUMNS = ('id', 'name', 'status', 'task_state', 'flavor', 'cell', 'host')
SHOW_COLUMNS = ('id', 'name', 'status', 'task_state', 'flavor', 'cell', 'host', 'node',
                'fault', 'created_at', 'events', 'scheduling')
EVENT_COLUMNS = ('event', 'host', 'node', 'start', 'finish', 'result', 'reason')


class WaitTimedOut(Exception):
    """``--wait`` gave up before every instance was ACTIVE or ERROR."""


class _TopLevelCommand(base.ConfigOptionsMixin):
    registrars = (rpc_options.register_opts, scheduler_conf.register_opts,
                  api_conf.register_opts, client_conf.register_opts)

    @staticmethod
    def quotas(conf, engine) -> quotas.DatabaseQuotas:
        """The ``[quota]`` driver (database or Keystone unified limits); Placement
        (``[placement]``) is reached only to count what is placed."""
        return quota_drivers.from_conf(conf, engine,
                                lambda: client_conf.client_from_conf(conf, 'cellplane'))

    def get_parser(self, prog_name):
        return self.add_config_arguments(super().get_parser(prog_name))

    @contextlib.contextmanager
    def api(self, parsed_args):
        """(conf, API engine, cell databases), closed afterwards."""
        conf = self.load_config(parsed_args)
        engine = databases.engine_for(conf, 'api')
        timeout = conf.cells.read_timeout
        cells = CellDatabases(engine, engine_factory=functools.partial(
            engines.create_engine, connect_timeout=timeout))
        cells.reload()
        try:
            yield conf, engine, cells
        finally:
            cells.dispose()
            engine.dispose()


def _row(server: servers.Server) -> tuple:
    return (server.uuid, server.name, server.status, server.task_state, server.flavor,
            server.cell, server.host)


def _event(event: AttemptEvent) -> dict:
    return {'event': event.event, 'host': event.host, 'node': event.node,
            'start': base.iso8601(event.start, timespec='milliseconds'),
            'finish': base.iso8601(event.finish, timespec='milliseconds'),
            'result': event.result, 'reason': event.reason}


# Formats that render nested values themselves; the others get text.
STRUCTURED_FORMATS = ('json', 'yaml')


def _as_text(value):
    """Nested lists and dicts as indented ``key: value`` lines (YAML), for a table cell."""
    if not isinstance(value, (list, dict)) or not value:
        return value
    return yaml.safe_dump(value, default_flow_style=False, sort_keys=False,
                          width=100).rstrip()


class ServerCreate(_TopLevelCommand, lister.Lister):
    """Create N servers: recorded in the API DB, scheduled by the super conductor.

    With ``--wait`` the exit code is 1 when any server ended in ERROR (the
    table still lists them all, and stderr names the failed ones), so a
    script can tell.
    """

    def run(self, parsed_args):
        self._failed: list = []
        code = super().run(parsed_args)
        if self._failed:
            self.app.stderr.write(
                f'{len(self._failed)} server(s) ended in ERROR: '
                + ', '.join(f'{s.name} ({s.uuid})' for s in self._failed)
                + '; see `cellplane server show ID`\n')
            return 1
        return code

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name')
        parser.add_argument('--flavor', required=True, help='flavor name or id')
        parser.add_argument('--count', default=1,
                            type=base.bounded(int, minimum=1, maximum=servers.MAX_COUNT),
                            help='how many (all placed, or none: default 1)')
        parser.add_argument('--image-property', action='append', default=[],
                            type=base.key_value, metavar='KEY=VALUE',
                            help='image property the host must support, e.g. '
                                 'hw_architecture=x86_64 (repeatable)')
        parser.add_argument('--availability-zone', metavar='AZ')
        parser.add_argument('--group', metavar='NAME_OR_ID',
                            help='make the servers members of this server group')
        parser.add_argument('--hint', action='append', default=[], type=_hint,
                            metavar='NAME=VALUE',
                            help='same_host=SERVER, different_host=SERVER, '
                                 'same_domain=LEVEL:SERVER, different_domain=LEVEL:SERVER '
                                 '(repeatable)')
        parser.add_argument('--project', default='default', help='owning project id')
        parser.add_argument('--user', default=getpass.getuser(), help='owning user id')
        parser.add_argument('--wait', action='store_true',
                            help='wait until every server is ACTIVE or ERROR')
        parser.add_argument('--timeout', type=base.bounded(float, minimum=0), default=300.0,
                            metavar='SECONDS',
                            help='give up waiting after this long (default 300)')
        return parser

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            transport = get_transport(rpc_options.require_transport_url(conf, 'cellplane'),
                                      conf)
            try:
                hints = scheduler_hints.resolve(engine, cells, parsed_args.hint,
                                                cell_timeout=conf.cells.read_timeout)
                uuids = servers.create(
                    engine, SuperConductorAPI(transport, conf=conf), new_context(
                        user_id=parsed_args.user, project_id=parsed_args.project),
                    name=parsed_args.name, flavor=parsed_args.flavor,
                    count=parsed_args.count, project_id=parsed_args.project,
                    user_id=parsed_args.user,
                    image_properties=dict(parsed_args.image_property),
                    availability_zone=parsed_args.availability_zone, cells=cells,
                    group=parsed_args.group, hints=hints, quotas=self.quotas(conf, engine),
                    default_zone=conf.default_availability_zone,
                    cell_timeout=conf.cells.read_timeout)
            finally:
                transport.cleanup()
            if parsed_args.wait:
                found = self._wait(engine, cells, uuids, parsed_args.timeout,
                                   conf.cells.read_timeout)
                self._failed = [s for s in found if s.status == servers.ERROR]
            else:
                found = servers.list_servers(engine, cells, uuids,
                                             cell_timeout=conf.cells.read_timeout)
        return LIST_COLUMNS, [_row(s) for s in found]

    def _wait(self, engine, cells, uuids, timeout, cell_timeout):
        deadline = time.monotonic() + timeout
        with tqdm(total=len(uuids), desc='servers ACTIVE or ERROR', unit='server',
                  file=self.app.stderr, disable=None) as bar:
            while True:
                found = servers.list_servers(engine, cells, uuids, include_deleted=True,
                                             cell_timeout=cell_timeout)
                done = sum(s.status in servers.FINAL_STATUSES for s in found)
                bar.update(done - bar.n)
                if done == len(uuids):
                    return found
                if time.monotonic() > deadline:
                    raise WaitTimedOut(
                        f'{len(uuids) - done} of {len(uuids)} server(s) still not ACTIVE '
                        f'or ERROR after {timeout:g} s; see `cellplane server list`')
                time.sleep(WAIT_POLL_SECONDS)


class _OneServerCommand(_TopLevelCommand):
    """A command about one server, named by its id or its name."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='SERVER',
                            help='server id, or name (refused if several have it)')
        return parser

    @staticmethod
    def server(conf, engine, cells, parsed_args) -> servers.Server:
        """The server named by the SERVER argument, with its events."""
        timeout = conf.cells.read_timeout
        return servers.show(engine, cells, servers.find(engine, cells, parsed_args.server,
                                                        cell_timeout=timeout),
                            cell_timeout=timeout)


def _hint(text: str) -> str:
    try:
        scheduler_hints.split(text)
    except scheduler_hints.HintError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _status(text: str) -> str:
    status = text.upper()
    if status not in servers.STATUSES:
        raise argparse.ArgumentTypeError(
            f'unknown status {text!r} (one of {", ".join(servers.STATUSES)})')
    return status


def _regex(text: str) -> re.Pattern:
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(
            f'{text!r} is not a regular expression ({exc})') from None


class ServerList(base.SaysWhatItFound, _TopLevelCommand, lister.Lister):
    """List servers: in cells, being scheduled, or failed before reaching a cell."""

    def summary(self, parsed_args, rows):
        if rows:
            return None
        asked = [f'{name} {getattr(parsed_args, name)}' for name in ('status', 'host', 'cell')
                 if getattr(parsed_args, name) is not None]
        if parsed_args.name is not None:
            asked.append(f'name matching {parsed_args.name.pattern!r}')
        return 'no servers' + (f' with {", ".join(asked)}' if asked else '')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--status', type=_status, metavar='STATUS',
                            help=f'only servers in this status '
                                 f'({", ".join(servers.STATUSES)})')
        parser.add_argument('--host', help='only servers on this host')
        parser.add_argument('--cell', help='only servers in this cell (its name)')
        parser.add_argument('--name', type=_regex, metavar='REGEX',
                            help='only servers whose name matches this regular expression')
        return parser

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            # Deleted servers are left out, unless they are what was asked for.
            found = servers.list_servers(engine, cells,
                                         include_deleted=parsed_args.status == servers.DELETED,
                                         cell_timeout=conf.cells.read_timeout)
        wanted = [s for s in found
                  if (parsed_args.status is None or s.status == parsed_args.status)
                  and (parsed_args.host is None or s.host == parsed_args.host)
                  and (parsed_args.cell is None or s.cell == parsed_args.cell)
                  and (parsed_args.name is None
                       or parsed_args.name.search(s.name or ''))]
        return LIST_COLUMNS, [_row(s) for s in wanted]


class ServerShow(_OneServerCommand, show.ShowOne):
    """Show one server, with every scheduling and build attempt (action events)."""

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            server = self.server(conf, engine, cells, parsed_args)
            scheduling = scheduling_of(conf, server.uuid)
        events = [_event(e) for e in server.events]
        if parsed_args.formatter not in STRUCTURED_FORMATS:
            # A table cell shows text: one field per line, not a Python repr.
            events, scheduling = _as_text(events), _as_text(scheduling)
        return SHOW_COLUMNS, (
            server.uuid, server.name, server.status, server.task_state, server.flavor,
            server.cell, server.host, server.node, server.fault,
            base.iso8601(server.created_at),
            events, scheduling)


def scheduling_of(conf, instance_uuid: str) -> dict | str | None:
    """The instance's part of its newest scheduling record, or why it is not shown.

    A record backend that cannot be read does not stop ``server show``: the
    field then says why (the instance itself was read from its cell).
    """
    try:
        backend = load_backend(conf)
    except RecordBackendError as exc:
        return f'scheduling records unavailable: {exc}'
    if backend is None:
        return None
    try:
        found = backend.find(RecordQuery(last=1, instance_uuid=instance_uuid))
    except Exception as exc:  # noqa: BLE001 - the record is an addition to the instance
        return (f'scheduling records unavailable: {type(exc).__name__}: '
                f'{str(exc).splitlines()[0] if str(exc) else ""}')
    finally:
        backend.close()
    if not found:
        return None
    return {**found[0].for_instance(instance_uuid),
            'created_at': base.iso8601(found[0].created_at, timespec='milliseconds')}


class ServerEvents(base.SaysWhatItFound, _OneServerCommand, lister.Lister):
    """A server's action events in its cell: every build attempt, in order, with its reason."""

    nothing = 'no events recorded for this server yet'

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            server = self.server(conf, engine, cells, parsed_args)
        return EVENT_COLUMNS, [tuple(_event(e)[c] for c in EVENT_COLUMNS)
                               for e in server.events]


class ServerDelete(_TopLevelCommand, command.Command):
    """Delete servers: terminate each on its host, or drop a build request without a cell.

    Each server is named by id or name. One that cannot be deleted is named
    on stderr with the reason and the others are still deleted; the exit
    code is then 1.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('servers', metavar='SERVER', nargs='+',
                            help='server id, or name (refused if several have it)')
        return parser

    def take_action(self, parsed_args):
        failed = 0
        with self.api(parsed_args) as (conf, engine, cells):
            transports = TransportCache(conf)

            def compute_api_for(cell: CellMapping) -> ComputeAPI:
                return ComputeAPI(transports.get(cell.transport_url), conf=conf)
            try:
                for name_or_id in parsed_args.servers:
                    try:
                        uuid = servers.find(engine, cells, name_or_id,
                                            cell_timeout=conf.cells.read_timeout)
                        done = servers.delete(engine, cells, compute_api_for,
                                              new_context(), uuid)
                    except servers.ServerError as exc:
                        failed += 1
                        self.app.stderr.write(f'Could not delete server {name_or_id}: '
                                              f'{exc}\n')
                        continue
                    self.app.stdout.write(f'{uuid}: {done}\n')
            finally:
                transports.cleanup()
        if failed:
            self.app.stderr.write(f'{failed} of {len(parsed_args.servers)} server(s) '
                                  f'could not be deleted\n')
            return 1
        return 0


COMMANDS = {'server create': ServerCreate, 'server list': ServerList,
            'server show': ServerShow, 'server events': ServerEvents,
            'server delete': ServerDelete}
