"""Instance actions and their events in a cell DB: an instance's attempt history.

Tables ``instance_actions`` and ``instance_action_events``.

One ``create`` action per instance, one event per try.

Every build attempt (the agent's report, success or failure) and every
claim the cell conductor tried on an alternate and Placement refused becomes
a row of ``instance_action_events`` under the instance's ``create`` action,
with host, node, start, finish, result and reason. Only the cell's own
services write it (the cell conductor, on behalf of its agents), so the
history of a build never depends on the top level. The fault written when
every host failed is made from this history (``describe_history``).

Functions take a SQLAlchemy connection inside the caller's transaction, so
a state change and the event that explains it are committed together.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cellplane.db.cell.models import instance_action_events, instance_actions
from cellplane.db.columns import naive_utc, utcnow
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.selection import Selection

ACTION_CREATE = 'create'
# Moves (one action each, named as Nova's), their events below.
ACTION_MIGRATE = 'migrate'
ACTION_RESIZE = 'resize'
ACTION_CONFIRM_RESIZE = 'confirmResize'
ACTION_REVERT_RESIZE = 'revertResize'
ACTION_LIVE_MIGRATION = 'live-migration'
ACTION_EVACUATE = 'evacuate'
# Nova's names for the asks about a live migration in progress.
ACTION_LIVE_MIGRATION_CANCEL = 'live_migration_cancel'
ACTION_LIVE_MIGRATION_FORCE_COMPLETE = 'live_migration_force_complete'
# The scheduler's answer for a move (ok: the destination claimed; failed: why not).
EVENT_MOVE_SCHEDULE = 'conductor_schedule_move'
# A move to one destination, as that host reported it (ok | failed, with why).
EVENT_MOVE = 'compute_move_instance'
# An evacuated instance's copy destroyed on its source host, back from the dead,
# and the source allocation its migration held freed.
EVENT_EVACUATE_CLEANUP = 'compute_destroy_evacuated'
# A build on a host, as the compute agent reported it (result ok | failed).
EVENT_BUILD = 'compute_build_and_run_instance'
# A claim of an alternate by the cell conductor that Placement refused.
EVENT_CLAIM = 'conductor_claim_alternate'
RESULT_OK = 'ok'
RESULT_FAILED = 'failed'


@dataclasses.dataclass(frozen=True)
class AttemptEvent:
    """One row of an instance's attempt history."""
    event: str
    host: str | None
    node: str | None
    start: datetime.datetime | None
    finish: datetime.datetime | None
    result: str | None
    reason: str | None

    @property
    def failed_build(self) -> bool:
        return self.event == EVENT_BUILD and self.result == RESULT_FAILED

    def describe(self) -> str:
        """``cmp1: build failed: No more IP addresses`` - one line of a fault."""
        what = {EVENT_BUILD: 'build', EVENT_CLAIM: 'claim', EVENT_MOVE: 'move',
                EVENT_MOVE_SCHEDULE: 'scheduling'}.get(self.event, self.event)
        if self.result == RESULT_OK:
            return f'{self.host}: {what} succeeded'
        outcome = 'refused by Placement' if self.event == EVENT_CLAIM else 'failed'
        return f'{self.host}: {what} {outcome}: {self.reason or "no reason given"}'


# Built once: every report of a build runs these (see instances.py's _APPLY).
_CREATE_ACTION_OF = (sa.select(instance_actions.c.id)
                     .where(instance_actions.c.instance_uuid == sa.bindparam('b_instance_uuid'),
                            instance_actions.c.action == ACTION_CREATE)
                     .order_by(instance_actions.c.id).limit(1))
_FINISH_ACTION = instance_actions.update().where(
    instance_actions.c.id == sa.bindparam('b_id'))
_INSERT_EVENT = instance_action_events.insert()
# Each step of a move finds or starts its action with these.
_INSERT_ACTION = instance_actions.insert()
_LATEST_ACTION = (sa.select(instance_actions.c.id)
                  .where(instance_actions.c.instance_uuid == sa.bindparam('b_instance_uuid'),
                         instance_actions.c.action.in_(sa.bindparam('b_actions',
                                                                    expanding=True)))
                  .order_by(instance_actions.c.id.desc()).limit(1))


def ensure_create_action(conn: Connection, instance_uuid: str, *,
                         request_id: str | None = None, user_id: str | None = None,
                         project_id: str | None = None) -> int:
    """The id of the instance's ``create`` action, created if it has none yet.

    The super conductor may create it when it creates the instance; the cell
    conductor creates it on the first event otherwise. One instance's events
    arrive one after the other (each attempt follows the previous one), so
    two concurrent creations for one instance do not happen in the boot flow.
    """
    found = conn.execute(_CREATE_ACTION_OF, {'b_instance_uuid': instance_uuid}).scalar()
    if found is not None:
        return found
    return create_action(conn, instance_uuid, request_id=request_id, user_id=user_id,
                         project_id=project_id)


def create_action(conn: Connection, instance_uuid: str, *, request_id: str | None = None,
                  user_id: str | None = None, project_id: str | None = None) -> int:
    """The id of a new ``create`` action of an instance that has none (one just inserted)."""
    now = utcnow()
    result = conn.execute(instance_actions.insert().values(
        instance_uuid=instance_uuid, action=ACTION_CREATE, request_id=request_id,
        user_id=user_id, project_id=project_id, start_time=now,
        created_at=now, updated_at=now))
    return result.inserted_primary_key[0]


def start_action(conn: Connection, instance_uuid: str, action: str, *,
                 request_id: str | None = None, user_id: str | None = None,
                 project_id: str | None = None) -> int:
    """The id of a new action ``action`` of the instance (a move, a confirm...)."""
    now = utcnow()
    result = conn.execute(_INSERT_ACTION, {
        'instance_uuid': instance_uuid, 'action': action, 'request_id': request_id,
        'user_id': user_id, 'project_id': project_id, 'start_time': now,
        'created_at': now, 'updated_at': now})
    return result.inserted_primary_key[0]


def latest_action(conn: Connection, instance_uuid: str, actions: Sequence[str]) -> int | None:
    """The id of the instance's newest action among ``actions``; None if it has none."""
    return conn.execute(_LATEST_ACTION, {'b_instance_uuid': instance_uuid,
                                         'b_actions': list(actions)}).scalar()


def record_event(conn: Connection, action_id: int, event: str, *, host: str | None,
                 node: str | None, result: str, reason: str | None = None,
                 start: datetime.datetime | None = None,
                 finish: datetime.datetime | None = None) -> None:
    """One event of an action (a move's scheduling, a move to one host...)."""
    now = utcnow()
    _insert_event(conn, action_id, event, host=host, node=node,
                  start_time=naive_utc(start) if start else now,
                  finish_time=naive_utc(finish) if finish else now,
                  result=result, reason=reason)


def events_of(conn: Connection, action_id: int) -> list[AttemptEvent]:
    """The events of one action, oldest first."""
    rows = conn.execute(sa.select(instance_action_events).where(
        instance_action_events.c.action_id == action_id).order_by(
        instance_action_events.c.id)).mappings().all()
    return [AttemptEvent(event=r['event'], host=r['host'], node=r['node'],
                         start=r['start_time'], finish=r['finish_time'],
                         result=r['result'], reason=r['reason']) for r in rows]


def record_build_attempt(conn: Connection, action_id: int, attempt: BuildAttempt) -> None:
    """One build, as the agent that ran it reported it."""
    _insert_event(conn, action_id, EVENT_BUILD, host=attempt.host, node=attempt.nodename,
                  start_time=naive_utc(attempt.start),
                  finish_time=naive_utc(attempt.finish),
                  result=attempt.result, reason=attempt.reason)


def record_refused_claim(conn: Connection, action_id: int, selection: Selection,
                         reason: str, start: datetime.datetime,
                         finish: datetime.datetime) -> None:
    """A claim of ``selection`` that could not be made, and why."""
    _insert_event(conn, action_id, EVENT_CLAIM, host=selection.service_host,
                  node=selection.nodename, start_time=naive_utc(start),
                  finish_time=naive_utc(finish), result=RESULT_FAILED, reason=reason)


def finish_action(conn: Connection, action_id: int, message: str | None = None) -> None:
    """Mark the action finished (the instance is ACTIVE, or in ERROR with ``message``)."""
    now = utcnow()
    conn.execute(_FINISH_ACTION, {'b_id': action_id, 'finish_time': now,
                                  'message': message, 'updated_at': now})


def history(conn: Connection, instance_uuid: str) -> list[AttemptEvent]:
    """Every event of the instance's actions, oldest first."""
    return histories(conn, [instance_uuid]).get(instance_uuid, [])


def histories(conn: Connection, instance_uuids: Sequence[str]
              ) -> dict[str, list[AttemptEvent]]:
    """The events of each instance's actions, oldest first (instances without any left out)."""
    rows = conn.execute(
        sa.select(instance_actions.c.instance_uuid, instance_action_events)
        .select_from(instance_action_events.join(
            instance_actions, instance_actions.c.id == instance_action_events.c.action_id))
        .where(instance_actions.c.instance_uuid.in_(list(instance_uuids)))
        .order_by(instance_action_events.c.id)).mappings().all()
    found: dict[str, list[AttemptEvent]] = {}
    for r in rows:
        found.setdefault(r['instance_uuid'], []).append(AttemptEvent(
            event=r['event'], host=r['host'], node=r['node'], start=r['start_time'],
            finish=r['finish_time'], result=r['result'], reason=r['reason']))
    return found


@dataclasses.dataclass(frozen=True)
class ActionRecord:
    """One action of an instance with its events, oldest event first (what the compute API shows)."""

    action: str
    instance_uuid: str
    request_id: str | None
    user_id: str | None
    project_id: str | None
    start_time: datetime.datetime | None
    finish_time: datetime.datetime | None
    message: str | None
    # The newest change of the action or of any of its events.
    updated_at: datetime.datetime | None
    events: tuple[AttemptEvent, ...]


def actions(conn: Connection, instance_uuid: str) -> list[ActionRecord]:
    """Every action of the instance, oldest first, each with its events: two statements."""
    rows = conn.execute(sa.select(instance_actions).where(
        instance_actions.c.instance_uuid == instance_uuid).order_by(
        instance_actions.c.id)).mappings().all()
    if not rows:
        return []
    events: dict[int, list] = {}
    for r in conn.execute(sa.select(instance_action_events).where(
            instance_action_events.c.action_id.in_([r['id'] for r in rows])).order_by(
            instance_action_events.c.id)).mappings():
        events.setdefault(r['action_id'], []).append(r)
    found = []
    for row in rows:
        mine = events.get(row['id'], [])
        changed = [t for t in [row['updated_at'], row['created_at'],
                               *(e['updated_at'] or e['created_at'] for e in mine)] if t]
        found.append(ActionRecord(
            action=row['action'], instance_uuid=row['instance_uuid'],
            request_id=row['request_id'], user_id=row['user_id'],
            project_id=row['project_id'], start_time=row['start_time'],
            finish_time=row['finish_time'], message=row['message'],
            updated_at=max(changed) if changed else None,
            events=tuple(AttemptEvent(event=e['event'], host=e['host'], node=e['node'],
                                      start=e['start_time'], finish=e['finish_time'],
                                      result=e['result'], reason=e['reason'])
                         for e in mine)))
    return found


def describe_history(events: list[AttemptEvent]) -> str:
    """One line per host tried, oldest first: what a fault's details list."""
    return '\n'.join(e.describe() for e in events if e.result != RESULT_OK)


@dataclasses.dataclass(frozen=True)
class Scheduled:
    """An instance just created by the super conductor, and how it was scheduled."""

    instance_uuid: str
    request_id: str | None
    user_id: str | None
    project_id: str | None
    host: str
    node: str
    start: datetime.datetime
    finish: datetime.datetime
    reason: str


def record_scheduled(conn: Connection, event: str, scheduled: Sequence[Scheduled]) -> None:
    """A ``create`` action for each instance, with its first event ``event`` (OK): two statements."""
    if not scheduled:
        return
    now = utcnow()
    action_ids = conn.execute(
        instance_actions.insert().returning(instance_actions.c.id,
                                            sort_by_parameter_order=True),
        [dict(instance_uuid=s.instance_uuid, action=ACTION_CREATE, request_id=s.request_id,
              user_id=s.user_id, project_id=s.project_id, start_time=now,
              created_at=now, updated_at=now) for s in scheduled]).scalars().all()
    conn.execute(instance_action_events.insert(), [
        dict(action_id=action_id, event=event, host=s.host, node=s.node,
             start_time=naive_utc(s.start), finish_time=naive_utc(s.finish),
             result=RESULT_OK, reason=s.reason, created_at=now, updated_at=now)
        for action_id, s in zip(action_ids, scheduled, strict=True)])


def delete_for_instance(conn: Connection, instance_uuid: str) -> None:
    """Remove every action of the instance with its events."""
    action_ids = [row.id for row in conn.execute(
        sa.select(instance_actions.c.id).where(
            instance_actions.c.instance_uuid == instance_uuid))]
    if action_ids:
        conn.execute(instance_action_events.delete().where(
            instance_action_events.c.action_id.in_(action_ids)))
        conn.execute(instance_actions.delete().where(
            instance_actions.c.id.in_(action_ids)))


def _insert_event(conn: Connection, action_id: int, event: str, **values) -> None:
    now = utcnow()
    conn.execute(_INSERT_EVENT, {'action_id': action_id, 'event': event,
                                 'created_at': now, 'updated_at': now, **values})
