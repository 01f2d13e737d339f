"""The cell conductor's part of a cold migration or resize: it drives the hosts, and reschedules inside the cell.

The super conductor hands it a move whose destination the scheduler
claimed (the migration's consumer holds the source host's allocation, the
instance's the destination's). From there, without any call upward:

1. ``start``: the migration is ``pre-migrating`` to ``host_list[0]``;
   ``prep_move`` is cast there. The destination prepares and asks the
   source to hand the instance over (``move_started``: ``migrating``),
   and the source asks the destination to finish, host to host.
2. ``finished``: the destination runs it. In one transaction the instance
   is on its new host and node at its new flavor (vm_state ``resized``,
   waiting for confirm or revert), the migration ``finished``, the build
   plan's owner the new host (fencing follows it). A move asked
   ``confirm_at_finish`` (a host drain's) is confirmed here at once, as the
   super conductor would (``_confirm``: Placement, then the source, then
   the cell); its instance is ``resize_confirming`` from that first write,
   so the super conductor's resume finishes a confirm stopped half way.
3. ``reschedule``: a destination failed (its attempt and reason become an
   event of the move's action). The source allocation goes back to the
   instance (``unclaim_move``, the undo of the scheduler's claim); then
   the remaining alternates are walked as a failed build's are (skipping
   hosts tried, hosts down and hosts that break the server group's hard
   policy; a refused claim recorded with Placement's reason), each
   claimed with the migration-consumer claim. None left: the migration is
   ``error`` with every host tried and why, the instance ACTIVE on its
   source (run again there: ``take_back``) with its allocation its own.

4. ``aborted``: a live migration's source stopped the copy for an abort
   (or refused one aborted before it began): the instance never stopped
   there. The migration is ``cancelled``, the destination's claim dropped
   and the source allocation the instance's again (``unclaim_move``), its
   task_state cleared, the destination's promise discarded. A move the
   API role cancelled while it was queued (before any destination) whose
   claim arrives after is undone at ``start``.

An evacuation (the source host is down) takes the same steps without
its source: the destination is cast ``rebuild_instance`` (compute API 1.5)
and rebuilds it alone. At ``finished`` it is ACTIVE there and the
migration ``done``; the migration's consumer keeps the dead source's
allocation until that host comes back (``evacuated_guests``: the
returning host learns which of its guests were evacuated, destroys them
before it reports, frees that allocation in Placement and says so,
``cleaned``: the migration ``completed``). A failed destination goes to
the next alternate as above; none left, the instance goes ERROR (the
source is dead: nothing to take back) with a fault naming every host
tried and why, its allocation its own again on the dead source, and the
migration ``failed``.

An instance deleted while its move waits for confirm (``deleted``, at
the destination's DELETED report) has the move confirmed: the source's
allocation dropped, its stopped copy destroyed, as Nova's delete does.

A report from a host the migration no longer points at (it was moved on
from it) changes nothing; a finished move such a host reports is
discarded there.
"""
from __future__ import annotations

import datetime
import logging
from typing import Sequence

from sqlalchemy.engine import Engine

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.context import RequestContext
from cellplane.objects import (
    build_plans,
    compute_nodes,
    instance_actions,
    instances,
    migrations,
    services,
)
from compute_agent.rpcapi import ComputeAPI
from conductor.cell import group_check

# isort: split
import oslo_messaging as messaging

from placement.client import (
    ClaimConflict,
    PlacementClient,
    PlacementClientError,
    PlacementUnreachable,
)
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.instance import ACTIVE, Instance
from rpc_schemas.migration import Migration
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection

LOG = logging.getLogger(__name__)

MOVE_ACTIONS = (instance_actions.ACTION_MIGRATE, instance_actions.ACTION_RESIZE,
                instance_actions.ACTION_LIVE_MIGRATION, instance_actions.ACTION_EVACUATE)


class CellMoves:
    """Drives the moves of one cell's instances between its hosts."""

    def __init__(self, *, engine: Engine, placement: PlacementClient, compute: ComputeAPI,
                 max_attempts: int, service_down_time: float | None = None) -> None:
        self._engine = engine
        self._placement = placement
        self._compute = compute
        self._max_attempts = max_attempts
        self._service_down_time = service_down_time

    # -- 1. the scheduler's destination ---------------------------------------
    def start(self, ctxt: RequestContext, instance: Instance, request_spec: RequestSpec,
              migration: Migration, host_list: Sequence[Selection], *,
              taken_at: datetime.datetime | None = None) -> None:
        """Start the move the scheduler claimed ``host_list[0]`` for.

        A hand-over that waited here while the super conductor resumed the
        move as lost (``conductor/super/resume_moves.py``) must not start: the
        claim is the later scheduling's, whose own hand-over follows.
        ``taken_at`` (cell conductor API 1.9: the stamp of the super
        conductor's take) tells them apart in the cell database: the move
        starts only if the migration is unchanged since (a resume takes it
        again, an abort cancels it: either changes it). Without it (an older
        super conductor), Placement is asked whether the instance holds the
        destination.
        """
        dest = host_list[0]
        if taken_at is None and not self._claimed_for(instance.uuid, dest):
            LOG.warning('Not starting move %s of instance %s to %s: the instance holds no '
                        'allocation there (the move was scheduled again)', migration.uuid,
                        instance.uuid, dest.service_host)
            return
        with self._engine.begin() as conn:
            try:
                migrations.advance(conn, migration.uuid, migrations.PRE_MIGRATING,
                                   dest_host=dest.service_host, dest_node=dest.nodename,
                                   unchanged_since=taken_at)
            except migrations.InvalidMigrationTransition as exc:
                if exc.current != migrations.CANCELLED:
                    LOG.warning('Not starting move %s of instance %s to %s: %s%s',
                                migration.uuid, instance.uuid, dest.service_host, exc,
                                '' if taken_at is None else
                                ' (or it changed since the take this hand-over comes '
                                'from: scheduled again, or started already)')
                    return
                action_id = None   # aborted while it was queued
            else:
                if migration.migration_type not in (migrations.LIVE_MIGRATION,
                                                    migrations.EVACUATION):
                    instances.set_task_state(conn, instance.uuid, instances.RESIZE_MIGRATING)
                action_id = self._action(conn, instance.uuid, ctxt)
                instance_actions.record_event(
                    conn, action_id, instance_actions.EVENT_MOVE_SCHEDULE,
                    host=dest.service_host, node=dest.nodename,
                    result=instance_actions.RESULT_OK,
                    reason=f'claimed by the scheduler, {len(host_list) - 1} alternate(s)')
        if action_id is None:
            # The scheduler's claim came after the abort: undone here.
            LOG.info('Move %s of instance %s was cancelled while it was scheduled: its '
                     'claim of %s undone', migration.uuid, instance.uuid, dest.service_host)
            self.placement_undo(instance.uuid, migration.uuid)
            return
        self._cast_prep(ctxt, instance, request_spec, migration, list(host_list), action_id)

    def _claimed_for(self, instance_uuid: str, dest: Selection) -> bool:
        """Whether the instance's allocation is on ``dest``'s node (True if Placement cannot say)."""
        try:
            held = self._placement.get_allocations(instance_uuid).allocations
        except (PlacementUnreachable, PlacementClientError):
            return True
        return dest.compute_node_uuid in held

    def _cast_prep(self, ctxt, instance: Instance, request_spec: RequestSpec,
                   migration: Migration, host_list: list[Selection], action_id: int) -> bool:
        """Cast prep_move to ``host_list[0]``; False (the claim undone, the failure recorded) if it cannot be sent."""
        send = (self._compute.rebuild_instance
                if migration.migration_type == migrations.EVACUATION
                else self._compute.prep_move)
        try:
            send(ctxt, instance, request_spec, migration, host_list)
        except messaging.MessagingException as exc:
            dest = host_list[0]
            LOG.warning('Could not send the move of %s to %s: %s', instance.uuid,
                        dest.service_host, exc)
            with self._engine.begin() as conn:
                instance_actions.record_event(
                    conn, action_id, instance_actions.EVENT_MOVE, host=dest.service_host,
                    node=dest.nodename, result=instance_actions.RESULT_FAILED,
                    reason=f'the move could not be sent to {dest.service_host}: {exc}')
            return False
        LOG.info('Move %s of instance %s sent to %s (%d alternate(s) behind it)',
                 migration.uuid, instance.uuid, host_list[0].service_host, len(host_list) - 1)
        return True

    # -- 2. the source hands over, the destination finishes --------------------
    def started(self, migration_uuid: str, dest_host: str) -> None:
        with self._engine.begin() as conn:
            if migrations.copying(conn, migration_uuid, dest_host) is None:
                current = migrations.get(conn, migration_uuid)
                LOG.info('Ignored the hand-over of move %s to %s: the move is %s to %s',
                         migration_uuid, dest_host, current.status, current.dest_host)

    def finished(self, ctxt: RequestContext, migration_uuid: str, instance_uuid: str,
                 host: str, node: str) -> None:
        with self._engine.begin() as conn:
            current = migrations.get(conn, migration_uuid)
            stale = (current.final or current.dest_host != host
                     or current.status not in (migrations.PRE_MIGRATING,
                                               migrations.MIGRATING))
            if not stale:
                if current.status == migrations.PRE_MIGRATING:
                    # The source's move_started may still be on its way (the
                    # two casts come from two hosts): it handed over all the same.
                    try:
                        migrations.advance(conn, migration_uuid, migrations.MIGRATING)
                    except migrations.InvalidMigrationTransition:
                        pass   # it arrived meanwhile
                live = current.migration_type == migrations.LIVE_MIGRATION
                evacuated = current.migration_type == migrations.EVACUATION
                confirm_now = current.confirm_at_finish and not (live or evacuated)
                migrations.advance(conn, migration_uuid, migrations.ending_of(current, True))
                # A live migration is over at its switch-over, an evacuation
                # once rebuilt: ACTIVE there. A cold move confirmed at once is
                # taken for its confirm in the same write (resize_confirming),
                # so that no confirm or revert of anyone else's begins.
                instances.place_after_move(
                    conn, instance_uuid, host=host, node=node, flavor=current.new_flavor,
                    vm_state=ACTIVE if live or evacuated else instances.RESIZED,
                    task_state=instances.RESIZE_CONFIRMING if confirm_now else None)
                build_plans.finish(conn, instance_uuid, host)
                action_id = self._action(conn, instance_uuid, ctxt)
                instance_actions.record_event(
                    conn, action_id, instance_actions.EVENT_MOVE, host=host, node=node,
                    result=instance_actions.RESULT_OK,
                    reason=('runs here: the live migration switched over' if live else
                            f'rebuilt here; {current.source_host} keeps its copy and '
                            f'allocation until it comes back' if evacuated else
                            f'runs here at flavor {current.new_flavor.name}; confirmed '
                            f'at once, as asked' if confirm_now else
                            f'runs here at flavor {current.new_flavor.name}; confirm or '
                            f'revert'))
                instance_actions.finish_action(conn, action_id)
                if confirm_now:
                    confirm_action = instance_actions.start_action(
                        conn, instance_uuid, instance_actions.ACTION_CONFIRM_RESIZE,
                        request_id=current.request_id,
                        user_id=getattr(ctxt, 'user_id', None),
                        project_id=getattr(ctxt, 'project_id', None))
        if stale and current.dest_host == host and current.status in (
                migrations.FINISHED, migrations.DONE, migrations.CONFIRMED):
            # Told twice (the stalled-move check finished it, then the report came).
            LOG.info('Move %s of instance %s already ended on %s', migration_uuid,
                     instance_uuid, host)
            return
        if stale:
            LOG.warning('Refused the end of move %s of instance %s on %s: the move is %s '
                        '(destination %s); discarding the instance there', migration_uuid,
                        instance_uuid, host, current.status, current.dest_host)
            if host != current.source_host:
                self._compute.discard_instance(ctxt, host, instance_uuid)
            return
        if live:
            # The switch-over: the source's allocation and its copy go.
            self.placement_undo_source(migration_uuid)
            self._compute.discard_instance(ctxt, current.source_host, instance_uuid)
        LOG.info('Instance %s moved from %s to %s (migration %s %s)', instance_uuid,
                 current.source_host, host, migration_uuid,
                 'done' if live or evacuated else 'finished')
        if confirm_now:
            self._confirm(ctxt, current, node, confirm_action)

    def _confirm(self, ctxt: RequestContext, migration: migrations.Migration, dest_node: str,
                 action_id: int) -> None:
        """Confirm a move asked ``confirm_at_finish`` that just finished: Placement, the source, the cell.

        The super conductor's confirm (``conductor/super/moves.py:SuperMoves._confirm``)
        step for step, in its order: the migration's allocation (the
        source's) removed, the source told to destroy its stopped copy,
        then one write: migration ``confirmed``, the instance ACTIVE doing
        nothing. Stopped before that write (Placement or the bus refusing,
        this conductor killed), the instance stays ``resize_confirming``
        and the super conductor's resume (``conductor/super/resume_moves.py``)
        does it all again after ``move_resume_after``, as for a confirm a
        dead super conductor began.
        """
        try:
            self._placement.unclaim(migration.uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            LOG.warning('Move %s of instance %s not confirmed yet: its source allocation '
                        'could not be removed from Placement (%s); the super conductor\'s '
                        'resume confirms it', migration.uuid, migration.instance_uuid, exc)
            return
        if migration.dest_host != migration.source_host:
            try:
                self._compute.discard_instance(ctxt, migration.source_host,
                                               migration.instance_uuid)
            except messaging.MessagingException as exc:
                LOG.warning('Move %s of instance %s not confirmed yet: %s could not be told '
                            'to destroy its copy (%s); the super conductor\'s resume '
                            'confirms it', migration.uuid, migration.instance_uuid,
                            migration.source_host, exc)
                return
        with self._engine.begin() as conn:
            try:
                migrations.advance(conn, migration.uuid, migrations.CONFIRMED)
            except migrations.InvalidMigrationTransition as exc:
                LOG.info('Move %s of instance %s not confirmed here: %s', migration.uuid,
                         migration.instance_uuid, exc)
                return
            instances.place_after_move(conn, migration.instance_uuid,
                                       host=migration.dest_host, node=dest_node,
                                       flavor=migration.new_flavor, vm_state=ACTIVE)
            instance_actions.finish_action(conn, action_id)
        LOG.info('Move %s of instance %s confirmed at its finish: it runs on %s, %s freed',
                 migration.uuid, migration.instance_uuid, migration.dest_host,
                 migration.source_host)

    # -- 4. a live migration aborted on its source -------------------------------
    def aborted(self, ctxt: RequestContext, migration_uuid: str, instance_uuid: str,
                host: str) -> None:
        """The source stopped the copy (or never began it): cancel the move, the instance stays there."""
        with self._engine.begin() as conn:
            current = migrations.get(conn, migration_uuid)
            if current.source_host != host or current.instance_uuid != instance_uuid:
                LOG.warning('Ignored the abort of move %s reported by %s: its source is %s',
                            migration_uuid, host, current.source_host)
                return
            try:
                migrations.advance(conn, migration_uuid, migrations.CANCELLED)
            except migrations.InvalidMigrationTransition as exc:
                LOG.info('Ignored the abort of move %s reported by %s: %s', migration_uuid,
                         host, exc)
                return
            instances.set_task_state(conn, instance_uuid, None, expected=instances.MIGRATING)
            action_id = self._action(conn, instance_uuid, ctxt)
            instance_actions.record_event(
                conn, action_id, instance_actions.EVENT_MOVE, host=current.dest_host,
                node=current.dest_node, result=instance_actions.RESULT_FAILED,
                reason=f'aborted: {host} stopped the copy; the instance runs there still')
            instance_actions.finish_action(conn, action_id, message=(
                f'cancelled: the live migration was aborted; it runs on {host}'))
        self.placement_undo(instance_uuid, migration_uuid)
        if current.dest_host is not None and current.dest_host != host:
            # Its promise of the instance's resources there (prep_move).
            self._compute.discard_instance(ctxt, current.dest_host, instance_uuid)
        LOG.info('Live migration %s of instance %s cancelled: it runs on %s, holding its '
                 'own allocation', migration_uuid, instance_uuid, host)

    # -- 3. a destination failed -----------------------------------------------
    def reschedule(self, ctxt: RequestContext, instance: Instance,
                   request_spec: RequestSpec, migration: Migration,
                   host_list: Sequence[Selection], attempt: BuildAttempt) -> None:
        uuid = instance.uuid
        with self._engine.begin() as conn:
            current = migrations.get(conn, migration.uuid)
            if current.final or current.dest_host != attempt.host:
                LOG.warning('Ignored the failed move of %s on %s: the move is %s to %s',
                            uuid, attempt.host, current.status, current.dest_host)
                return
            action_id = self._action(conn, uuid, ctxt)
            instance_actions.record_event(
                conn, action_id, instance_actions.EVENT_MOVE, host=attempt.host,
                node=attempt.nodename, result=instance_actions.RESULT_FAILED,
                reason=attempt.reason, start=attempt.start, finish=attempt.finish)
        LOG.info('Move of instance %s failed on %s (%s); %d alternate(s) left', uuid,
                 attempt.host, attempt.reason, len(host_list))
        try:
            self._placement.unclaim_move(uuid, migration.uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            self.give_up(ctxt, instance, migration, action_id, (
                f'the allocations could not be moved back in Placement ({exc}): the '
                f'instance holds {attempt.host}\'s and migration {migration.uuid} its '
                f'source\'s; move them back by hand (POST /allocations) once Placement '
                f'answers'))
            return
        self._walk(ctxt, instance, request_spec, migration, list(host_list), action_id)

    def _walk(self, ctxt, instance: Instance, request_spec: RequestSpec,
              migration: Migration, remaining: list[Selection], action_id: int) -> None:
        with self._engine.connect() as conn:
            events = instance_actions.events_of(conn, action_id)
        tried = {e.host for e in events if e.event == instance_actions.EVENT_MOVE}
        silent = self._silent_hosts(remaining)
        while remaining:
            if len(tried) >= self._max_attempts:
                untried = ', '.join(s.service_host for s in remaining)
                self.give_up(ctxt, instance, migration, action_id, (
                    f'[conductor] max_attempts = {self._max_attempts} hosts tried; '
                    f'alternates not tried: {untried}'))
                return
            selection, remaining = remaining[0], remaining[1:]
            host = selection.service_host
            if host in tried or host == migration.source_host:
                continue
            reason = None
            if host in silent:
                reason = (f'host {host} is down: no heartbeat since {silent[host]} '
                          f'(service_down_time {self._service_down_time:g} s)')
            else:
                reason = group_check.breaks_group(self._placement, request_spec,
                                                  instance.uuid, selection)
            if reason is None:
                reason = self._claim(instance, request_spec, migration, selection)
                if isinstance(reason, PlacementUnreachable):
                    self.give_up(ctxt, instance, migration, action_id, (
                        f'Placement could not be reached to claim an alternate: {reason}'))
                    return
            if reason is not None:
                self._record_skip(action_id, selection, reason)
                continue
            with self._engine.begin() as conn:
                migrations.advance(conn, migration.uuid, migrations.PRE_MIGRATING,
                                   dest_host=host, dest_node=selection.nodename)
            if self._cast_prep(ctxt, instance, request_spec, migration,
                               [selection, *remaining], action_id):
                return
            tried.add(host)
            self._placement.unclaim_move(instance.uuid, migration.uuid)
        self.give_up(ctxt, instance, migration, action_id,
                     'no alternate host left: every host the scheduler offered was tried')

    def _claim(self, instance: Instance, request_spec: RequestSpec, migration: Migration,
               selection: Selection):
        """Claim ``selection`` for the move; None, the reason it was refused, or PlacementUnreachable."""
        try:
            self._placement.claim_move(instance.uuid, migration.uuid, selection.allocations,
                                       project_id=request_spec.project_id,
                                       user_id=request_spec.user_id)
        except ClaimConflict as exc:
            why = 'lost a race' if exc.lost_race else 'refused'
            return f'Placement {why} the claim: {exc.detail}'
        except PlacementClientError as exc:
            return f'Placement answered {exc.status} ({exc.code}): {exc.detail}'
        except PlacementUnreachable as exc:
            return exc
        return None

    def _record_skip(self, action_id: int, selection: Selection, reason: str) -> None:
        LOG.info('Alternate %s not usable for a move: %s', selection.service_host, reason)
        now = instance_actions.utcnow()
        with self._engine.begin() as conn:
            instance_actions.record_refused_claim(conn, action_id, selection, reason, now, now)

    def _silent_hosts(self, host_list: Sequence[Selection]) -> dict:
        if self._service_down_time is None:
            return {}
        return services.silent_hosts(
            self._engine, {s.service_host for s in host_list}, compute_nodes.COMPUTE_BINARY,
            service_down_time=self._service_down_time)

    def placement_undo_source(self, migration_uuid: str) -> None:
        """Drop the migration's allocation (the source's, after a live switch-over); errors logged."""
        try:
            self._placement.unclaim(migration_uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            LOG.error('Could not remove the source allocation of migration %s (%s); the '
                      'Placement audit removes it, the migration being over',
                      migration_uuid, exc)

    def placement_undo(self, instance_uuid: str, migration_uuid: str) -> None:
        """Move the source allocation back to the instance (nothing if the migration holds none); errors logged."""
        try:
            self._placement.unclaim_move(instance_uuid, migration_uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            LOG.error('Could not move the allocation of migration %s back to instance %s: '
                      '%s', migration_uuid, instance_uuid, exc)

    def give_up(self, ctxt: RequestContext, instance: Instance, migration: Migration,
                action_id: int | None, ending: str) -> None:
        """The move failed: migration ``error`` naming every host tried and why; ACTIVE on the source.

        An evacuation's source is down: the instance goes ERROR there, its
        fault the same error, and nothing is asked of the source.
        """
        evacuation = migration.migration_type == migrations.EVACUATION
        with self._engine.begin() as conn:
            if action_id is None:
                action_id = self._action(conn, instance.uuid, ctxt)
            tried = instance_actions.describe_history(
                instance_actions.events_of(conn, action_id))
            hosts = '; '.join(tried.splitlines()) or 'none'
            error = f'Move failed on every host tried ({hosts}); {ending}'
            try:
                migrations.advance(conn, migration.uuid,
                                   migrations.ending_of(migration, False), error=error)
            except migrations.InvalidMigrationTransition as exc:
                LOG.warning('Move %s of instance %s already ended: %s', migration.uuid,
                            instance.uuid, exc)
                return
            if evacuation:
                instances.set_error(conn, instance.uuid, message=error, details=error,
                                    host=migration.source_host)
            else:
                instances.set_task_state(conn, instance.uuid, None)
            instance_actions.finish_action(conn, action_id, message=error)
        LOG.warning('Move %s of instance %s failed; it stays on %s: %s', migration.uuid,
                    instance.uuid, migration.source_host, error)
        if evacuation:
            return
        try:
            # It may have been handed over (stopped) before its destination failed.
            self._compute.take_back(ctxt, instance, migration)
        except messaging.MessagingException as exc:
            LOG.error('Could not ask %s to run instance %s again after its failed move: '
                      '%s', migration.source_host, instance.uuid, exc)

    # -- an instance deleted while its move waited for confirm ----------------------
    def deleted(self, ctxt: RequestContext, instance_uuid: str) -> list[str]:
        """The instance was deleted: its move waiting for confirm or revert is confirmed; the migrations.

        Nova's delete confirms a resize first; here the destination's
        terminate runs as for any server, and its DELETED report ends the
        move: the migration's allocation (the source's) is dropped in
        Placement, the source destroys its stopped copy (``discard_instance``:
        no Placement change, no report), then the migration is
        ``confirmed``. Killed before that write, the migration stays
        ``finished`` with its instance deleted, which the Placement audit
        treats as over (it frees the allocation); a Placement that cannot
        take the removal is left to that audit too.
        """
        with self._engine.connect() as conn:
            waiting = migrations.find(conn, instance_uuid=instance_uuid,
                                      statuses=[migrations.FINISHED])
        confirmed = []
        for migration in waiting:
            self.placement_undo_source(migration.uuid)
            if migration.source_host != migration.dest_host:
                try:
                    self._compute.discard_instance(ctxt, migration.source_host,
                                                   instance_uuid)
                except messaging.MessagingException as exc:
                    LOG.error('Could not ask %s to destroy the copy of deleted instance %s '
                              'it kept for migration %s: %s', migration.source_host,
                              instance_uuid, migration.uuid, exc)
            with self._engine.begin() as conn:
                try:
                    migrations.advance(conn, migration.uuid, migrations.CONFIRMED)
                except migrations.InvalidMigrationTransition as exc:
                    LOG.info('Move %s of deleted instance %s ended meanwhile: %s',
                             migration.uuid, instance_uuid, exc)
                    continue
            LOG.info('Move %s of instance %s confirmed at its delete: %s freed',
                     migration.uuid, instance_uuid, migration.source_host)
            confirmed.append(migration.uuid)
        return confirmed

    # -- an evacuated instance's source host is back ---------------------------
    def evacuated_guests(self, guests: dict[str, list[str]]) -> list[dict]:
        """The evacuations from these hosts awaiting cleanup; ``destroy``: the host holds that guest, not its own.

        A guest is destroyed only if its instance runs elsewhere now (or is
        deleted): an instance moved back to its old host since is its own.
        """
        with self._engine.connect() as conn:
            waiting = migrations.awaiting_cleanup(conn, list(guests))
            rows = {r['uuid']: r for r in instances.get_many(
                conn, [m.instance_uuid for m in waiting])}
        answer = []
        for m in waiting:
            row = rows.get(m.instance_uuid)
            owned_here = row is not None and row['host'] == m.source_host and (
                row['vm_state'] != instances.DELETED)
            if owned_here:
                continue   # it came back here since: its copy is its own (the periodic look completes it)
            answer.append({'host': m.source_host, 'instance_uuid': m.instance_uuid,
                           'migration_uuid': m.uuid,
                           'destroy': m.instance_uuid in guests.get(m.source_host, ())})
        return answer

    def cleaned(self, host: str, migration_uuids: Sequence[str]) -> None:
        """``host`` destroyed its evacuated guests and freed their migrations' allocations: ``completed``."""
        for migration_uuid in migration_uuids:
            with self._engine.begin() as conn:
                try:
                    current = migrations.get(conn, migration_uuid)
                    if current.source_host != host:
                        LOG.error('Ignored the cleanup of evacuation %s from %s: its source '
                                  'is %s', migration_uuid, host, current.source_host)
                        continue
                    migrations.advance(conn, migration_uuid, migrations.COMPLETED)
                except (migrations.MigrationNotFound,
                        migrations.InvalidMigrationTransition) as exc:
                    LOG.warning('Ignored the cleanup of evacuation %s on %s: %s',
                                migration_uuid, host, exc)
                    continue
                action_id = instance_actions.latest_action(
                    conn, current.instance_uuid, [instance_actions.ACTION_EVACUATE])
                if action_id is not None:
                    instance_actions.record_event(
                        conn, action_id, instance_actions.EVENT_EVACUATE_CLEANUP, host=host,
                        node=current.source_node, result=instance_actions.RESULT_OK,
                        reason=f'{host} came back: its copy destroyed, the source '
                               f'allocation of migration {migration_uuid} freed')
            LOG.info('Evacuation %s of instance %s completed: %s came back and cleaned up',
                     migration_uuid, current.instance_uuid, host)

    def clean_returned_sources(self, ctxt: RequestContext) -> list[str]:
        """Complete the evacuations whose source is up again and was not cleaned by its agent; the migrations done.

        The agent of a returning host holding guests cleans up before its
        first heartbeat (``evacuated_guests``). This periodic look catches
        the rest: a host back without its guests (a lost disk: nothing asks),
        an agent too old to ask, and a host forced down without being
        stopped, whose agent never restarted. A source counts as back once
        its compute service is up (not forced down, heard of within
        ``service_down_time``) with a heartbeat newer than the evacuation's
        end: its copy is discarded there (``discard_instance``: no Placement
        change, no report), the migration's allocation removed, the
        migration ``completed``. A removal Placement refuses now is tried
        again next time.
        """
        if self._service_down_time is None:
            return []
        with self._engine.connect() as conn:
            waiting = [m for m in migrations.find(conn, statuses=[migrations.DONE])
                       if migrations.awaits_cleanup(m)]
            if not waiting:
                return []
            rows = {r['uuid']: r for r in instances.get_many(
                conn, [m.instance_uuid for m in waiting])}
        back = {}
        for host in {m.source_host for m in waiting}:
            row = services.get_service(self._engine, host, compute_nodes.COMPUTE_BINARY)
            if row is not None and services.is_up(row,
                                                  service_down_time=self._service_down_time):
                back[host] = row['last_seen_at']
        done = []
        for m in waiting:
            seen = back.get(m.source_host)
            if seen is None or m.finished_at is None or seen <= m.finished_at:
                continue
            row = rows.get(m.instance_uuid)
            if row is None or row['host'] != m.source_host or (
                    row['vm_state'] == instances.DELETED):
                try:
                    self._compute.discard_instance(ctxt, m.source_host, m.instance_uuid)
                except messaging.MessagingException as exc:
                    LOG.warning('Could not ask %s to destroy its copy of evacuated instance '
                                '%s (%s); trying again next time', m.source_host,
                                m.instance_uuid, exc)
                    continue
            try:
                self._placement.unclaim(m.uuid)
            except (PlacementUnreachable, PlacementClientError) as exc:
                LOG.warning('Could not remove the source allocation of evacuation %s (%s); '
                            'trying again next time', m.uuid, exc)
                continue
            self.cleaned(m.source_host, [m.uuid])
            done.append(m.uuid)
        return done

    @staticmethod
    def _action(conn, instance_uuid: str, ctxt) -> int:
        found = instance_actions.latest_action(conn, instance_uuid, MOVE_ACTIONS)
        if found is not None:
            return found
        return instance_actions.start_action(
            conn, instance_uuid, instance_actions.ACTION_MIGRATE,
            request_id=getattr(ctxt, 'request_id', None),
            user_id=getattr(ctxt, 'user_id', None),
            project_id=getattr(ctxt, 'project_id', None))
