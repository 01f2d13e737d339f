"""The super conductor's part of a cold migration or resize: the scheduler's destination, then confirm or revert.

``migrate``: the API role recorded a ``queued`` migration in the
instance's cell (and set its task_state ``resize_prep``). The instance's
request spec (API database) is asked again with the migration's new flavor,
restricted to the instance's own cell, its source host excluded (unless
``[conductor] allow_resize_to_same_host`` and it is a resize); its server
group and scheduler hints still apply. The scheduler claims the
destination with the migration-consumer claim (API 1.1) and returns it with
same-cell alternates; the move is handed to the cell's conductor
(``move_instance``), which drives the hosts and reschedules without
calling up. No destination: the migration is ``error`` with the
scheduler's reason, the instance ACTIVE on its source, its allocation
untouched.

An evacuation (``evacuate_server``) is scheduled the same way (a host
the operator named is asked for alone, as for a live migration), and
handed to the cell's conductor with ``evacuate_instance`` (cell conductor
API 1.7): the source is dead, so the destination rebuilds it without
it. No destination: the migration is ``failed`` with the scheduler's
reason, the instance as it was (on its dead host, its allocation its own),
so that it can be evacuated again once a host has room.

``confirm``: the instance runs on its destination; the migration's
consumer (the source host's allocation) is dropped and the source destroys
its stopped copy. ``revert``: the source allocation goes back to the
instance (``unclaim_move``), the destination's copy is destroyed and the
source runs the instance again at its old flavor. Each begins with a
compare-and-set on the instance's task_state (the API role's, before it
cast), so a confirm and a revert asked at once do not both run; Placement
is written, then the hosts are told, and only then does the cell database
say it is done: a super conductor killed anywhere before leaves the
instance ``resize_confirming`` or ``resize_reverting`` for the resume
(``resume_moves.py``) to do all of it again. With ``[conductor] resize_confirm_window`` set,
a periodic task confirms what waited longer (``confirm_expired``).
"""
from __future__ import annotations

import dataclasses
import datetime
import logging
from typing import Callable

from sqlalchemy.engine import Engine

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.cells.databases import CellDatabases
from cellplane.context import RequestContext, new_context
from cellplane.db import reads
from cellplane.db.columns import utcnow
from cellplane.objects import build_plans, instance_actions, instances, migrations, request_specs
from cellplane.objects.cell_mappings import CellMapping
from compute_agent.rpcapi import ComputeAPI
from conductor.cell.rpcapi import CellConductorAPI
from conductor.super import group_places

# isort: split
import oslo_messaging as messaging

from placement.client import PlacementClient, PlacementClientError, PlacementUnreachable
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, Instance
from rpc_schemas.request_spec import RequestedDestination, RequestSpec
from scheduler.errors import NoValidHost, SchedulerError
from scheduler.rpcapi import SchedulerAPI

LOG = logging.getLogger(__name__)


class MoveRefused(Exception):
    """A confirm or revert that cannot be done now; the message says why."""


ENDING_WORDS = {instances.RESIZE_CONFIRMING: 'confirmed', instances.RESIZE_REVERTING: 'reverted'}


@dataclasses.dataclass(frozen=True)
class _Moving:
    cell: CellMapping
    engine: Engine
    row: dict
    migration: migrations.Migration


class SuperMoves:
    """Moves as the super conductor sees them: the scheduler's answer, confirm, revert."""

    def __init__(self, *, api_engine: Engine, cells: CellDatabases, scheduler: SchedulerAPI,
                 cell_conductor_for: Callable[[CellMapping], CellConductorAPI],
                 compute_api_for: Callable[[CellMapping], ComputeAPI],
                 placement: PlacementClient, num_alternates: int,
                 allow_resize_to_same_host: bool = False) -> None:
        self._api_engine = api_engine
        self._cells = cells
        self._scheduler = scheduler
        self._cell_conductor_for = cell_conductor_for
        self._compute_api_for = compute_api_for
        self._placement = placement
        self._num_alternates = num_alternates
        self._same_host = allow_resize_to_same_host

    def _read(self, cell_uuid: str, migration_uuid: str) -> _Moving:
        engine = self._cells.engine(cell_uuid)
        with reads.connect(engine) as conn:
            migration = migrations.get(conn, migration_uuid)
            row = instances.get_instance(conn, migration.instance_uuid)
        if row is None:
            raise instances.InstanceNotFound(
                f'instance {migration.instance_uuid} of migration {migration_uuid} is not '
                f'in cell {cell_uuid}')
        return _Moving(self._cells.mapping(cell_uuid), engine, row, migration)

    # -- the destination -----------------------------------------------------------
    def migrate(self, ctxt: RequestContext, cell_uuid: str, migration_uuid: str, *,
                resumed: bool = False) -> None:
        """Schedule a queued move and hand it to its cell (``resumed``: taken already, ``resume_moves.py``)."""
        moving = self._read(cell_uuid, migration_uuid)
        migration = moving.migration
        if migration.status != migrations.QUEUED:
            LOG.info('Move %s is %s already: not scheduled again', migration_uuid,
                     migration.status)
            return
        # The take's stamp (resumed: the resume's, read with the migration):
        # the cell conductor starts the move only if the migration is unchanged since.
        taken_at = migration.updated_at
        if not resumed:
            with moving.engine.begin() as conn:
                taken_at = migrations.take(conn, migration_uuid,
                                           updated_at=migration.created_at)
            if taken_at is None:
                LOG.info('Move %s is being scheduled already (resumed as lost): this '
                         'message is skipped', migration_uuid)
                return
        LOG.info('Scheduling move %s of instance %s', migration_uuid, migration.instance_uuid)
        instance = _instance(moving.row, cell_uuid)
        spec = self._spec(moving, instance)
        try:
            host_lists = self._scheduler.select_destinations(
                ctxt, spec, [instance.uuid], self._num_alternates,
                migration_uuid=migration_uuid)
        except NoValidHost as exc:
            self._fail(moving, f'NoValidHost: {exc}')
            return
        except SchedulerError as exc:
            self._fail(moving, f'the scheduler refused the move: {type(exc).__name__}: {exc}')
            return
        except messaging.MessagingTimeout:
            # Its answer may have claimed: the claim is undone before saying so.
            self._undo_claim(instance.uuid, migration_uuid)
            self._fail(moving, 'the scheduler did not answer (is a cellplane-scheduler '
                               'running on the top-level bus?)')
            return
        except messaging.RemoteError as exc:
            self._fail(moving, f'the scheduler failed: {exc.exc_type}: {exc.value}')
            return
        host_list = host_lists[0]
        spec = self._with_group_places(spec)
        conductor = self._cell_conductor_for(moving.cell)
        hand_over = (conductor.evacuate_instance
                     if migration.migration_type == migrations.EVACUATION
                     else conductor.move_instance)
        try:
            hand_over(ctxt, instance, spec, migration.payload(), host_list,
                      taken_at=taken_at)
        except Exception as exc:  # any failure: the claim must not stay behind
            LOG.exception('Could not hand move %s to the conductor of cell %s',
                          migration_uuid, moving.cell.name)
            self._undo_claim(instance.uuid, migration_uuid)
            self._fail(moving, f'the move could not be sent to the conductor of cell '
                               f'{moving.cell.name}: {exc}')
            return
        LOG.info('Move %s of instance %s: %s claimed (%d alternate(s)); handed to cell %s',
                 migration_uuid, instance.uuid, host_list[0].service_host,
                 len(host_list) - 1, moving.cell.name)

    def _spec(self, moving: _Moving, instance: Instance) -> RequestSpec:
        """The instance's request spec for this move: its new flavor, its cell, not its host."""
        migration = moving.migration
        stored = request_specs.get(self._api_engine, instance.uuid)
        spec = stored or RequestSpec(flavor=migration.old_flavor,
                                     project_id=instance.project_id,
                                     user_id=instance.user_id)
        same_host = self._same_host and migration.migration_type == migrations.RESIZE
        # A live migration or evacuation to a host the operator named: that host alone.
        named = (migration.dest_host if migration.migration_type in (
            migrations.LIVE_MIGRATION, migrations.EVACUATION) else None)
        return dataclasses.replace(
            spec, flavor=migration.new_flavor, num_instances=1, retry=None,
            ignore_hosts=[] if same_host else [migration.source_host],
            requested_destination=RequestedDestination(cell_uuid=moving.cell.uuid,
                                                       host=named),
            # The zone it was asked for, else none: it may move to any zone of its cell.
            availability_zone=spec.availability_zone)

    def _with_group_places(self, spec: RequestSpec) -> RequestSpec:
        if spec.instance_group is None:
            return spec
        try:
            return group_places.with_places(self._api_engine, spec)
        except Exception:  # the move goes on; alternates are checked against no member
            LOG.warning('Could not read the members of server group %s for a move',
                        spec.instance_group.uuid, exc_info=True)
            return spec

    def _undo_claim(self, instance_uuid: str, migration_uuid: str) -> None:
        try:
            self._placement.unclaim_move(instance_uuid, migration_uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            LOG.error('Could not move the allocation of migration %s back to instance %s '
                      '(%s); the Placement audit finds it once the migration is over',
                      migration_uuid, instance_uuid, exc)

    def _fail(self, moving: _Moving, reason: str) -> None:
        migration = moving.migration
        with moving.engine.begin() as conn:
            try:
                migrations.advance(conn, migration.uuid,
                                   migrations.ending_of(migration, False), error=reason)
            except migrations.InvalidMigrationTransition as exc:
                # Ended meanwhile (a live migration aborted while it was queued).
                LOG.info('Move %s of instance %s not failed: %s', migration.uuid,
                         migration.instance_uuid, exc)
                return
            instances.set_task_state(conn, migration.instance_uuid, None)
            action_id = instance_actions.latest_action(
                conn, migration.instance_uuid,
                [instance_actions.ACTION_MIGRATE, instance_actions.ACTION_RESIZE,
                 instance_actions.ACTION_LIVE_MIGRATION, instance_actions.ACTION_EVACUATE])
            if action_id is not None:
                instance_actions.record_event(
                    conn, action_id, instance_actions.EVENT_MOVE_SCHEDULE, host=None,
                    node=None, result=instance_actions.RESULT_FAILED, reason=reason)
                instance_actions.finish_action(conn, action_id, message=reason)
        LOG.info('Move %s of instance %s failed; it stays on %s: %s', migration.uuid,
                 migration.instance_uuid, migration.source_host, reason)

    def confirm_expired(self, window: float) -> list[str]:
        """Confirm the finished moves nobody ended within ``window`` seconds; the migrations confirmed.

        A cell that cannot be read is skipped (logged) and looked at again
        next time; a move someone ends meanwhile is left to them.
        """
        confirmed = []
        cutoff = utcnow() - datetime.timedelta(seconds=window)
        for mapping in self._cells.reload():
            try:
                with self._cells.engine(mapping.uuid).connect() as conn:
                    waiting = [m for m in migrations.find(conn, statuses=[migrations.FINISHED])
                               if m.updated_at is not None and m.updated_at < cutoff]
            except Exception as exc:  # noqa: BLE001 - one cell's outage must not stop the others
                LOG.warning('Could not look for moves to confirm in cell %s: %s',
                            mapping.name, exc)
                continue
            for migration in waiting:
                try:
                    self.confirm(new_context(), mapping.uuid, migration.uuid, expired=True)
                except MoveRefused as exc:
                    LOG.info('Not confirming move %s after resize_confirm_window: %s',
                             migration.uuid, exc)
                    continue
                LOG.info('Move %s of instance %s confirmed: unconfirmed for more than '
                         'resize_confirm_window (%g s)', migration.uuid,
                         migration.instance_uuid, window)
                confirmed.append(migration.uuid)
        return confirmed

    # -- confirm and revert --------------------------------------------------------
    def _begin(self, cell_uuid: str, migration_uuid: str, task_state: str,
               action: str, ctxt, *, expired: bool = False) -> tuple[_Moving, int | None]:
        """Take the instance for the confirm or revert; the move and the action's id.

        The API role set ``task_state`` and began the action before it cast
        (so that the ask outlives a super conductor that dies holding it):
        the instance is taken over with a compare-and-set on ``updated_at``,
        as the resume does, so that of this message and a resume that found
        it waiting one goes on. A sender that set nothing (an older API):
        begun here, from no task_state. ``expired`` (resize_confirm_window's
        own confirm, which nobody asked for) never takes over an instance
        someone is confirming or reverting: the cell conductor confirming a
        drain's move at its finish, a user's revert.
        """
        moving = self._read(cell_uuid, migration_uuid)
        migration = moving.migration
        if migration.status != migrations.FINISHED:
            raise MoveRefused(f'migration {migration_uuid} is {migration.status}, not '
                              f'{migrations.FINISHED}')
        row = moving.row
        if expired and row['task_state'] is not None:
            raise MoveRefused(f'instance {migration.instance_uuid} is in task '
                              f'{row["task_state"]} already')
        with moving.engine.begin() as conn:
            if row['task_state'] == task_state:
                if not instances.retake_task(conn, migration.instance_uuid,
                                             task_state=task_state,
                                             updated_at=row['updated_at']):
                    raise MoveRefused(f'instance {migration.instance_uuid} is being '
                                      f'{ENDING_WORDS[task_state]} already (resumed)')
                return moving, instance_actions.latest_action(
                    conn, migration.instance_uuid, [action])
            if not instances.begin_task(conn, migration.instance_uuid,
                                        vm_state=instances.RESIZED, task_state=task_state):
                raise MoveRefused(f'instance {migration.instance_uuid} is not waiting for '
                                  f'its move to be confirmed or reverted')
            action_id = instance_actions.start_action(
                conn, migration.instance_uuid, action, request_id=ctxt.request_id,
                user_id=ctxt.user_id, project_id=ctxt.project_id)
        return moving, action_id

    def _abandon(self, moving: _Moving, action_id: int | None, task_state: str,
                 why: str) -> None:
        with moving.engine.begin() as conn:
            instances.set_task_state(conn, moving.migration.instance_uuid, None,
                                     expected=task_state)
            if action_id is not None:
                instance_actions.finish_action(conn, action_id, message=why)

    def confirm(self, ctxt: RequestContext, cell_uuid: str, migration_uuid: str, *,
                expired: bool = False) -> None:
        moving, action_id = self._begin(cell_uuid, migration_uuid,
                                        instances.RESIZE_CONFIRMING,
                                        instance_actions.ACTION_CONFIRM_RESIZE, ctxt,
                                        expired=expired)
        self._confirm(ctxt, moving, action_id)

    def _confirm(self, ctxt: RequestContext, moving: _Moving, action_id: int | None, *,
                 resumed: bool = False) -> None:
        migration = moving.migration
        migration_uuid = migration.uuid
        try:
            self._placement.unclaim(migration_uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            why = f'the source allocation could not be removed from Placement: {exc}'
            if resumed:
                # Left resize_confirming: tried again move_resume_after from now.
                raise MoveRefused(why) from exc
            self._abandon(moving, action_id, instances.RESIZE_CONFIRMING, why)
            raise MoveRefused(why) from exc
        # The source told before the cell says confirmed: killed in between,
        # the instance stays resize_confirming and the resume does it all again.
        if migration.dest_host != migration.source_host:
            self._compute_api_for(moving.cell).discard_instance(
                ctxt, migration.source_host, migration.instance_uuid)
        with moving.engine.begin() as conn:
            if not self._advance_ending(conn, migration, migrations.CONFIRMED):
                return
            instances.place_after_move(conn, migration.instance_uuid,
                                       host=migration.dest_host, node=migration.dest_node,
                                       flavor=migration.new_flavor, vm_state=ACTIVE)
            if action_id is not None:
                instance_actions.finish_action(conn, action_id)
        LOG.info('Move %s of instance %s confirmed: it runs on %s, %s freed',
                 migration_uuid, migration.instance_uuid, migration.dest_host,
                 migration.source_host)

    def revert(self, ctxt: RequestContext, cell_uuid: str, migration_uuid: str) -> None:
        moving, action_id = self._begin(cell_uuid, migration_uuid,
                                        instances.RESIZE_REVERTING,
                                        instance_actions.ACTION_REVERT_RESIZE, ctxt)
        self._revert(ctxt, moving, action_id)

    def _revert(self, ctxt: RequestContext, moving: _Moving, action_id: int | None, *,
                resumed: bool = False) -> None:
        migration = moving.migration
        migration_uuid = migration.uuid
        try:
            # Nothing to do (False) when a dead super conductor had done it.
            self._placement.unclaim_move(migration.instance_uuid, migration_uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            why = f'the source allocation could not be moved back in Placement: {exc}'
            if resumed:
                raise MoveRefused(why) from exc
            self._abandon(moving, action_id, instances.RESIZE_REVERTING, why)
            raise MoveRefused(why) from exc
        # The hosts told before the cell says reverted: killed in between, the
        # instance stays resize_reverting and the resume does it all again
        # (both steps tolerate being done twice).
        compute = self._compute_api_for(moving.cell)
        if migration.dest_host != migration.source_host:
            compute.discard_instance(ctxt, migration.dest_host, migration.instance_uuid)
        instance = _instance({**moving.row, 'host': migration.source_host,
                              'node': migration.source_node}, cell_uuid=moving.cell.uuid)
        compute.take_back(ctxt, instance, migration.payload(),
                          same_host=migration.dest_host == migration.source_host)
        with moving.engine.begin() as conn:
            if not self._advance_ending(conn, migration, migrations.REVERTED):
                return
            instances.place_after_move(conn, migration.instance_uuid,
                                       host=migration.source_host,
                                       node=migration.source_node,
                                       flavor=migration.old_flavor, vm_state=ACTIVE)
            build_plans.finish(conn, migration.instance_uuid, migration.source_host)
            if action_id is not None:
                instance_actions.finish_action(conn, action_id)
        LOG.info('Move %s of instance %s reverted: it runs on %s again', migration_uuid,
                 migration.instance_uuid, migration.source_host)

    @staticmethod
    def _advance_ending(conn, migration: migrations.Migration, status: str) -> bool:
        """The migration confirmed or reverted; False if it ended meanwhile (another ran it)."""
        try:
            migrations.advance(conn, migration.uuid, status)
        except migrations.InvalidMigrationTransition as exc:
            LOG.info('Move %s of instance %s not %s here: %s', migration.uuid,
                     migration.instance_uuid, status, exc)
            return False
        return True

    # -- a confirm or revert a dead super conductor began (resume_moves.py) ----------
    def resume_ending(self, ctxt: RequestContext, cell_uuid: str, migration_uuid: str,
                      task_state: str) -> None:
        """Finish the confirm (``resize_confirming``) or revert a dead super conductor began.

        The caller took the instance over (``instances.retake_task``). Each
        step is done again from the start: Placement's (a no-op if it was
        done), the hosts told (again, perhaps: a discard of nothing and a
        take-back of what runs change nothing), then the cell's write. A Placement
        that cannot take it raises ``MoveRefused`` and leaves the instance
        in ``task_state``, to be tried again.
        """
        moving = self._read(cell_uuid, migration_uuid)
        if moving.migration.status != migrations.FINISHED \
                or moving.row['task_state'] != task_state:
            LOG.info('Move %s is %s, its instance %s: nothing to resume',
                     migration_uuid, moving.migration.status, moving.row['task_state'])
            return
        action = (instance_actions.ACTION_CONFIRM_RESIZE
                  if task_state == instances.RESIZE_CONFIRMING
                  else instance_actions.ACTION_REVERT_RESIZE)
        with moving.engine.connect() as conn:
            action_id = instance_actions.latest_action(conn, moving.migration.instance_uuid,
                                                       [action])
        end = self._confirm if task_state == instances.RESIZE_CONFIRMING else self._revert
        end(ctxt, moving, action_id, resumed=True)


def _instance(row: dict, cell_uuid: str) -> Instance:
    """The Instance payload of a cell row (ACTIVE: a moving instance is)."""
    return Instance(uuid=row['uuid'], project_id=row['project_id'],
                    user_id=row['user_id'] or row['project_id'],
                    flavor=Flavor.from_primitive(row['flavor']),
                    display_name=row['display_name'],
                    availability_zone=row['availability_zone'], vm_state=ACTIVE,
                    task_state=None, host=row['host'], node=row['node'],
                    cell_uuid=cell_uuid, image_ref=row['image_ref'])

