"""Moving servers as the API role asks: migrate, resize, live migrate, evacuate, confirm, revert; migrations shown.

``migrate`` (a cold migration, or with a flavor a resize) takes an ACTIVE
server doing nothing else: in its cell's database, in one transaction, its
task_state becomes ``resize_prep`` (a compare-and-set: of two moves asked
at once one is refused), a ``queued`` migration and a ``migrate`` or
``resize`` instance action are recorded; then ``migrate_server`` is cast
to the super conductor (``conductor/super/moves.py``). ``confirm`` and
``revert`` take a server whose move ``finished`` (VERIFY_RESIZE): its
task_state becomes ``resize_confirming`` or ``resize_reverting`` (a
compare-and-set) with a ``confirmResize`` or ``revertResize`` action, then
``confirm_resize`` or ``revert_resize`` is cast. What cannot be done now is
``MoveConflict`` (the compute API's 409), a bad argument ``InvalidMove``
(400); nothing is written then.

``evacuate`` takes a server whose host is down (its compute service
forced down, or silent longer than ``service_down_time``), ACTIVE or in
ERROR and doing nothing else: task_state ``rebuilding``, a ``queued``
migration of type ``evacuation`` and an ``evacuate`` action, then
``evacuate_server`` (super conductor API 1.4). A server whose host is up
is ``HostStillUp`` (Nova's ComputeServiceInUse); a named target host no
cell has is ``TargetHostNotFound``.

A live migration in progress (the server ACTIVE, task_state migrating) may
be aborted (``abort_live_migration``) or forced to complete
(``force_complete_live_migration``), as Nova's compute API allows: while
its source copies it (``migrating``), and the abort also before (queued or
pre-migrating, Nova's 2.65). Queued (no destination yet), the abort cancels
it here, in the cell database; otherwise it is cast to the source
(compute API 1.6), which stops the copy or refuses to begin it and tells its
cell conductor (``move_aborted``). Too late (the copy over), the live
migration ends ``done`` all the same, as in Nova.
"""
from __future__ import annotations

import dataclasses
import uuid as uuidlib
from typing import Callable

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.context import RequestContext
from cellplane.objects import flavors, instance_actions, instances, migrations, services
from cellplane.objects.cell_mappings import CellMapping
from cellplane.objects.migrations import Migration
from cellplane_api import servers
from compute_agent.rpcapi import ComputeAPI, LiveMigrationControlNotSupported
from conductor.super.rpcapi import SuperConductorAPI
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, ERROR

# Statuses after which a migrate or resize has nothing more to do by itself.
SETTLED = frozenset({migrations.FINISHED}) | migrations.FINAL


class MoveConflict(servers.ServerError):
    """The server cannot be moved (or its move confirmed or reverted) in the state it is in."""


class InvalidMove(servers.ServerError):
    """The move asked for is wrong in itself (an unknown flavor, the flavor it has)."""


class HostStillUp(InvalidMove):
    """An evacuation of a server whose host's compute service is up (Nova's ComputeServiceInUse)."""


class TargetHostNotFound(servers.ServerError):
    """An evacuation to a host no cell has a compute service for."""


class InvalidServerState(MoveConflict):
    """The server is not ACTIVE and live migrating (Nova's InstanceInvalidState): ``attr`` is ``state``."""

    def __init__(self, instance_uuid: str, attr: str, state: str | None) -> None:
        super().__init__(f'server {instance_uuid} is in {attr} {state}')
        self.attr = attr
        self.state = state


class MigrationNotFoundForServer(servers.ServerError):
    """The server has no migration with that id."""

    def __init__(self, migration_id, instance_uuid: str) -> None:
        super().__init__(f'Migration {migration_id} not found for instance {instance_uuid}')


class InvalidMigrationState(servers.ServerError):
    """The migration is not in a status the ask takes (Nova's InvalidMigrationState)."""

    def __init__(self, migration: Migration, method: str) -> None:
        super().__init__(f'Migration {migration.id} state of instance '
                         f'{migration.instance_uuid} is {migration.status}. Cannot {method} '
                         f'while the migration is in this state.')


@dataclasses.dataclass(frozen=True)
class CellMigration:
    """A migration and the cell it is in."""

    cell: str
    migration: Migration


def _cell(api_engine: Engine, cells: CellDatabases, instance_uuid: str) -> str:
    cell_uuid = servers.cell_of(api_engine, instance_uuid)
    if cell_uuid is None:
        raise MoveConflict(f'server {instance_uuid} is not in a cell yet (being scheduled, '
                           f'or failed before it reached one): nothing to move')
    return cell_uuid


def _record(conn, ctxt: RequestContext, instance_uuid: str, row: dict, migration_type: str,
            action: str, *, old_flavor: Flavor, new_flavor: Flavor,
            dest_host: str | None = None, confirm_at_finish: bool = False) -> Migration:
    """A ``queued`` migration from the instance's host and node, and its instance action."""
    migration = migrations.create(
        conn, uuid=str(uuidlib.uuid4()), instance_uuid=instance_uuid,
        migration_type=migration_type, source_host=row['host'], source_node=row['node'],
        old_flavor=old_flavor, new_flavor=new_flavor, request_id=ctxt.request_id,
        dest_host=dest_host, confirm_at_finish=confirm_at_finish)
    instance_actions.start_action(
        conn, instance_uuid, action, request_id=ctxt.request_id, user_id=ctxt.user_id,
        project_id=ctxt.project_id)
    return migration


def _busy(instance_uuid: str, row: dict) -> MoveConflict:
    doing = f' ({row["task_state"]})' if row['task_state'] else ''
    return MoveConflict(f'server {instance_uuid} is {row["vm_state"]}{doing}: only an '
                        f'ACTIVE server doing nothing else can be moved')


def _send(conductor: SuperConductorAPI, ctxt: RequestContext, engine: Engine, cell_uuid: str,
          migration: Migration, *, ended: str, task_state: str, what: str) -> None:
    """Cast the queued move to the super conductor; if it cannot be sent, end it (``ended``) and free the server."""
    try:
        conductor.migrate_server(ctxt, cell_uuid, migration.uuid)
    except Exception as exc:  # nothing may be left half asked
        with engine.begin() as conn:
            migrations.advance(conn, migration.uuid, ended,
                               error=f'could not be sent to the super conductor: {exc}')
            instances.set_task_state(conn, migration.instance_uuid, None, expected=task_state)
        raise servers.ServerError(f'{what} could not be sent to the super conductor: '
                                  f'{exc}') from exc


def migrate(api_engine: Engine, cells: CellDatabases, conductor: SuperConductorAPI,
            ctxt: RequestContext, instance_uuid: str, *,
            flavor: str | None = None, confirm_at_finish: bool = False,
            cell_uuid: str | None = None) -> Migration:
    """Ask for a cold migration (``flavor`` None) or a resize of the server; its queued migration.

    ``confirm_at_finish``: the move is confirmed as soon as it finishes, by
    the cell conductor (as a host drain wants: nobody is asked to confirm),
    so that it ends ``confirmed`` without a ``confirm`` of the caller's.
    ``cell_uuid``: the cell the caller read the server from (a host drain),
    so that its mapping is not read again; the server not found there is
    ``ServerNotFound`` as well.
    """
    new_flavor = None
    if flavor is not None:
        try:
            new_flavor = servers.flavor_payload(flavors.get(api_engine, flavor))
        except flavors.FlavorError as exc:
            raise InvalidMove(str(exc)) from None
    cell_uuid = cell_uuid or _cell(api_engine, cells, instance_uuid)
    engine = cells.engine(cell_uuid)
    with engine.begin() as conn:
        row = instances.get_instance(conn, instance_uuid)
        if row is None:
            raise servers.ServerNotFound(f'no server with uuid {instance_uuid}')
        old_flavor = Flavor.from_primitive(row['flavor'])
        if new_flavor is not None and new_flavor.flavorid == old_flavor.flavorid:
            raise InvalidMove(f'server {instance_uuid} has flavor {old_flavor.name} '
                              f'already: resize it to another')
        if not instances.begin_task(conn, instance_uuid, vm_state=ACTIVE,
                                    task_state=instances.RESIZE_PREP):
            raise _busy(instance_uuid, row)
        migration = _record(
            conn, ctxt, instance_uuid, row,
            migrations.MIGRATION if new_flavor is None else migrations.RESIZE,
            (instance_actions.ACTION_MIGRATE if new_flavor is None
             else instance_actions.ACTION_RESIZE),
            old_flavor=old_flavor, new_flavor=new_flavor or old_flavor,
            confirm_at_finish=confirm_at_finish)
    _send(conductor, ctxt, engine, cell_uuid, migration, ended=migrations.ERROR,
          task_state=instances.RESIZE_PREP, what=f'the move of server {instance_uuid}')
    return migration


def live_migrate(api_engine: Engine, cells: CellDatabases, conductor: SuperConductorAPI,
                 ctxt: RequestContext, instance_uuid: str, *,
                 host: str | None = None, cell_uuid: str | None = None) -> Migration:
    """Ask for a live migration (to ``host``, or where the scheduler chooses); its queued migration.

    A named host is recorded as the migration's destination while it is
    queued: the scheduler is asked for that host alone (claimed, or refused
    with the reason). ``cell_uuid``: as ``migrate``'s.
    """
    cell_uuid = cell_uuid or _cell(api_engine, cells, instance_uuid)
    engine = cells.engine(cell_uuid)
    with engine.begin() as conn:
        row = instances.get_instance(conn, instance_uuid)
        if row is None:
            raise servers.ServerNotFound(f'no server with uuid {instance_uuid}')
        if host is not None and host == row['host']:
            raise InvalidMove(f'server {instance_uuid} runs on {host} already')
        if not instances.begin_task(conn, instance_uuid, vm_state=ACTIVE,
                                    task_state=instances.MIGRATING):
            raise _busy(instance_uuid, row)
        flavor = Flavor.from_primitive(row['flavor'])
        migration = _record(conn, ctxt, instance_uuid, row, migrations.LIVE_MIGRATION,
                            instance_actions.ACTION_LIVE_MIGRATION, old_flavor=flavor,
                            new_flavor=flavor, dest_host=host)
    _send(conductor, ctxt, engine, cell_uuid, migration, ended=migrations.FAILED,
          task_state=instances.MIGRATING, what=f'the live migration of server {instance_uuid}')
    return migration


def _host_down(engine: Engine, host: str, service_down_time: float) -> str | None:
    """Why ``host``'s compute service is down (forced down, or silent), or None if it is up.

    A host without a compute service row is refused (``MoveConflict``).
    """
    row = services.get_service(engine, host, servers.COMPUTE_BINARY)
    if row is None:
        raise MoveConflict(f'host {host} has no compute service: whether it is down cannot '
                           f'be told, so nothing is evacuated off it')
    if row.get('forced_down'):
        return f'the compute service of {host} is forced down'
    if not services.is_up(row, service_down_time=service_down_time):
        return (f'the compute service of {host} sent no heartbeat since '
                f'{row.get("last_seen_at")} (service_down_time {service_down_time:g} s)')
    return None


def _known_host(cells: CellDatabases, cell_uuid: str, host: str) -> bool:
    return services.get_service(cells.engine(cell_uuid), host,
                                servers.COMPUTE_BINARY) is not None


def evacuate(api_engine: Engine, cells: CellDatabases, conductor: SuperConductorAPI,
             ctxt: RequestContext, instance_uuid: str, *, service_down_time: float,
             host: str | None = None) -> Migration:
    """Evacuate a server off its dead host (to ``host``, or the scheduler's choice); its queued migration.

    Refused (``HostStillUp``) unless the server's host's compute service
    is down or forced down; an evacuation never runs an instance on two
    hosts, so a live host must be stopped or forced down first.
    """
    cell_uuid = _cell(api_engine, cells, instance_uuid)
    engine = cells.engine(cell_uuid)
    if host is not None and not _known_host(cells, cell_uuid, host):
        raise TargetHostNotFound(f'Compute host {host} not found.')
    with engine.connect() as conn:
        row = instances.get_instance(conn, instance_uuid)
    if row is None:
        raise servers.ServerNotFound(f'no server with uuid {instance_uuid}')
    if host is not None and host == row['host']:
        raise InvalidMove("The target host can't be the same one.")
    if not row['host']:
        raise MoveConflict(f'server {instance_uuid} has no host: nothing to evacuate')
    if _host_down(engine, row['host'], service_down_time) is None:
        raise HostStillUp(f'Compute service of {row["host"]} is still in use: only a server '
                          f'whose host is down (its compute service forced down, or silent '
                          f'for service_down_time) can be evacuated.')
    with engine.begin() as conn:
        if not any(instances.begin_task(conn, instance_uuid, vm_state=state,
                                        task_state=instances.REBUILDING)
                   for state in (ACTIVE, ERROR)):
            doing = f' ({row["task_state"]})' if row['task_state'] else ''
            raise MoveConflict(f'server {instance_uuid} is {row["vm_state"]}{doing}: only '
                               f'an ACTIVE or ERROR server doing nothing else can be '
                               f'evacuated')
        flavor = Flavor.from_primitive(row['flavor'])
        migration = _record(conn, ctxt, instance_uuid, row, migrations.EVACUATION,
                            instance_actions.ACTION_EVACUATE, old_flavor=flavor,
                            new_flavor=flavor, dest_host=host)
    try:
        conductor.evacuate_server(ctxt, cell_uuid, migration.uuid)
    except Exception as exc:  # nothing may be left half asked
        with engine.begin() as conn:
            migrations.advance(conn, migration.uuid, migrations.FAILED,
                               error=f'could not be sent to the super conductor: {exc}')
            instances.set_task_state(conn, instance_uuid, None,
                                     expected=instances.REBUILDING)
        raise servers.ServerError(f'the evacuation of server {instance_uuid} could not be '
                                  f'sent to the super conductor: {exc}') from exc
    return migration


def _finished_move(cells: CellDatabases, cell_uuid: str, instance_uuid: str) -> Migration:
    with cells.engine(cell_uuid).connect() as conn:
        row = instances.get_instance(conn, instance_uuid)
        moving = migrations.in_progress(conn, instance_uuid)
    if row is None:
        raise servers.ServerNotFound(f'no server with uuid {instance_uuid}')
    if (moving is None or moving.status != migrations.FINISHED
            or row['vm_state'] != instances.RESIZED or row['task_state'] is not None):
        raise MoveConflict(f'server {instance_uuid} has no move waiting to be confirmed '
                           f'or reverted (it is {row["vm_state"]}'
                           f'{", migration " + moving.uuid + " " + moving.status if moving else ""})')
    return moving


def confirm(api_engine: Engine, cells: CellDatabases, conductor: SuperConductorAPI,
            ctxt: RequestContext, instance_uuid: str) -> Migration:
    """Confirm the server's finished move (its source allocation is dropped); the migration."""
    return _end(api_engine, cells, conductor, ctxt, instance_uuid,
                task_state=instances.RESIZE_CONFIRMING,
                action=instance_actions.ACTION_CONFIRM_RESIZE, cast=conductor.confirm_resize)


def revert(api_engine: Engine, cells: CellDatabases, conductor: SuperConductorAPI,
           ctxt: RequestContext, instance_uuid: str) -> Migration:
    """Revert the server's finished move (back on its source, at its old flavor); the migration."""
    return _end(api_engine, cells, conductor, ctxt, instance_uuid,
                task_state=instances.RESIZE_REVERTING,
                action=instance_actions.ACTION_REVERT_RESIZE, cast=conductor.revert_resize)


def _end(api_engine: Engine, cells: CellDatabases, conductor: SuperConductorAPI,
         ctxt: RequestContext, instance_uuid: str, *, task_state: str, action: str,
         cast: Callable) -> Migration:
    """Take the server for a confirm or revert (its task_state, its action), then cast it.

    The task_state is written before the cast, as Nova's API does: a super
    conductor that dies holding the message (acknowledged when received)
    leaves the server in it, and another one's resume finishes the end
    (``conductor/super/resume_moves.py``); without it the ask would be lost.
    """
    cell_uuid = _cell(api_engine, cells, instance_uuid)
    moving = _finished_move(cells, cell_uuid, instance_uuid)
    engine = cells.engine(cell_uuid)
    with engine.begin() as conn:
        if not instances.begin_task(conn, instance_uuid, vm_state=instances.RESIZED,
                                    task_state=task_state):
            raise MoveConflict(f'server {instance_uuid} has no move waiting to be confirmed '
                               f'or reverted (another confirm or revert was just asked)')
        action_id = instance_actions.start_action(
            conn, instance_uuid, action, request_id=ctxt.request_id, user_id=ctxt.user_id,
            project_id=ctxt.project_id)
    try:
        cast(ctxt, cell_uuid, moving.uuid)
    except Exception as exc:  # nothing may be left half asked
        why = f'could not be sent to the super conductor: {exc}'
        with engine.begin() as conn:
            instances.set_task_state(conn, instance_uuid, None, expected=task_state)
            instance_actions.finish_action(conn, action_id, message=why)
        raise servers.ServerError(f'the {action} of server {instance_uuid} {why}') from exc
    return moving


def list_migrations(api_engine: Engine, cells: CellDatabases, *,
                    instance_uuid: str | None = None,
                    statuses: list[str] | None = None) -> list[CellMigration]:
    """Migrations, oldest first per cell: of one server (its cell only), or of every cell."""
    if instance_uuid is not None:
        wanted = [_cell(api_engine, cells, instance_uuid)]
    else:
        wanted = [m.uuid for m in cells.reload()]
    found = []
    for cell_uuid in wanted:
        name = cells.mapping(cell_uuid).name
        with cells.engine(cell_uuid).connect() as conn:
            found += [CellMigration(name, m) for m in migrations.find(
                conn, instance_uuid=instance_uuid, statuses=statuses)]
    return found


def show_migration(api_engine: Engine, cells: CellDatabases,
                   migration_uuid: str) -> CellMigration:
    """One migration, looked for in every cell; ``servers.ServerError`` if none has it."""
    for mapping in cells.reload():
        with cells.engine(mapping.uuid).connect() as conn:
            try:
                return CellMigration(mapping.name, migrations.get(conn, migration_uuid))
            except migrations.MigrationNotFound:
                continue
    raise servers.ServerError(f'no migration {migration_uuid} in any cell')


def migration_of_server(api_engine: Engine, cells: CellDatabases, instance_uuid: str,
                        migration_id: int | None) -> Migration | None:
    """The server's migration with this id (its row id in the server's cell); None if it has none."""
    if migration_id is None:
        return None
    cell_uuid = _cell(api_engine, cells, instance_uuid)
    with cells.engine(cell_uuid).connect() as conn:
        try:
            found = migrations.get_by_id(conn, migration_id)
        except migrations.MigrationNotFound:
            return None
    return found if found.instance_uuid == instance_uuid else None


def _live_migration(conn, instance_uuid: str, migration_id: int | None, allowed: set[str],
                    method: str) -> Migration:
    """The server's live migration ``migration_id`` if the server and it are in a state ``method`` takes."""
    row = instances.get_instance(conn, instance_uuid)
    if row is None or row['vm_state'] == instances.DELETED:
        raise servers.ServerNotFound(f'no server with uuid {instance_uuid}')
    # As Nova's check_instance_state: the vm_state, then the task_state.
    if row['vm_state'] != ACTIVE:
        raise InvalidServerState(instance_uuid, 'vm_state', row['vm_state'])
    if row['task_state'] != instances.MIGRATING:
        raise InvalidServerState(instance_uuid, 'task_state', row['task_state'])
    try:
        migration = migrations.get_by_id(conn, migration_id) if migration_id is not None else None
    except migrations.MigrationNotFound:
        migration = None
    if migration is None or migration.instance_uuid != instance_uuid:
        raise MigrationNotFoundForServer(migration_id, instance_uuid)
    if migration.status not in allowed:
        raise InvalidMigrationState(migration, method)
    return migration


def abort_live_migration(api_engine: Engine, cells: CellDatabases,
                         compute_api_for: Callable[[CellMapping], ComputeAPI],
                         ctxt: RequestContext, instance_uuid: str, migration_id: int | None, *,
                         in_queue: bool = True) -> Migration:
    """Abort the server's live migration (``in_queue``: queued or pre-migrating too, Nova's 2.65).

    Queued: cancelled here at once (the server's task_state cleared). Later:
    the abort is cast to the source, which stops or refuses the copy; the
    migration as it was when asked is returned.
    """
    allowed = {migrations.MIGRATING}
    if in_queue:
        allowed |= {migrations.QUEUED, migrations.PRE_MIGRATING}
    cell_uuid = _cell(api_engine, cells, instance_uuid)
    engine = cells.engine(cell_uuid)
    with engine.begin() as conn:
        migration = _live_migration(conn, instance_uuid, migration_id, allowed,
                                    'abort live migration')
        instance_actions.finish_action(conn, instance_actions.start_action(
            conn, instance_uuid, instance_actions.ACTION_LIVE_MIGRATION_CANCEL,
            request_id=ctxt.request_id, user_id=ctxt.user_id, project_id=ctxt.project_id))
        if migration.status == migrations.QUEUED:
            try:
                migration = migrations.advance(conn, migration.uuid, migrations.CANCELLED)
            except migrations.InvalidMigrationTransition:
                # Scheduled meanwhile: its source is told, as for one pre-migrating.
                migration = migrations.get(conn, migration.uuid)
            else:
                instances.set_task_state(conn, instance_uuid, None,
                                         expected=instances.MIGRATING)
                action_id = instance_actions.latest_action(
                    conn, instance_uuid, [instance_actions.ACTION_LIVE_MIGRATION])
                if action_id is not None:
                    instance_actions.finish_action(conn, action_id, message=(
                        'cancelled: the live migration was aborted before a destination '
                        'was chosen'))
                return migration
    try:
        compute_api_for(cells.mapping(cell_uuid)).live_migration_abort(
            ctxt, migration.source_host, instance_uuid, migration.uuid)
    except LiveMigrationControlNotSupported as exc:
        raise MoveConflict(str(exc)) from None
    return migration


def force_complete_live_migration(api_engine: Engine, cells: CellDatabases,
                                  compute_api_for: Callable[[CellMapping], ComputeAPI],
                                  ctxt: RequestContext, instance_uuid: str,
                                  migration_id: int | None) -> Migration:
    """Ask the source to end the live migration's copy now (it must be ``migrating``)."""
    cell_uuid = _cell(api_engine, cells, instance_uuid)
    with cells.engine(cell_uuid).begin() as conn:
        migration = _live_migration(conn, instance_uuid, migration_id, {migrations.MIGRATING},
                                    'force complete')
        instance_actions.finish_action(conn, instance_actions.start_action(
            conn, instance_uuid, instance_actions.ACTION_LIVE_MIGRATION_FORCE_COMPLETE,
            request_id=ctxt.request_id, user_id=ctxt.user_id, project_id=ctxt.project_id))
    try:
        compute_api_for(cells.mapping(cell_uuid)).live_migration_force_complete(
            ctxt, migration.source_host, instance_uuid, migration.uuid)
    except LiveMigrationControlNotSupported as exc:
        raise MoveConflict(str(exc)) from None
    return migration


def live_migration_asked(api_engine: Engine, cells: CellDatabases, instance_uuid: str,
                         asked: str | None) -> Migration:
    """The server's live migration named by uuid or id, or (``asked`` None) the one in progress.

    ``MigrationNotFoundForServer`` if the server has none such.
    """
    cell_uuid = _cell(api_engine, cells, instance_uuid)
    with cells.engine(cell_uuid).connect() as conn:
        if asked is None:
            found = migrations.in_progress(conn, instance_uuid)
            if found is not None and found.migration_type == migrations.LIVE_MIGRATION:
                return found
            raise MigrationNotFoundForServer('in progress', instance_uuid)
        try:
            found = (migrations.get_by_id(conn, int(asked)) if asked.isdigit()
                     else migrations.get(conn, asked))
        except migrations.MigrationNotFound:
            found = None
    if found is None or found.instance_uuid != instance_uuid:
        raise MigrationNotFoundForServer(asked, instance_uuid)
    return found
