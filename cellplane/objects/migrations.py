"""Migrations in a cell DB (``migrations``): each move of an instance between hosts, and its state machine.

A migration's uuid is also a Placement consumer: while the instance moves,
that consumer holds the source host's allocation and the instance's own
uuid holds the destination's (``placement.client``'s ``claim_move``).

The state machine (every change of ``status`` goes through ``advance``,
a compare-and-set on the states it may come from; ``take`` marks a
``queued`` migration as being scheduled, so that one super conductor
schedules it)::

    queued --------> pre-migrating --> migrating --> finished --> confirmed
      |                 ^    |  ^          |            |    \\--> reverted
      |                 |____|  |__________|            |
      |              (next alternate: a destination failed)
      +--> error / failed  (from any state before finished; finished -> error)
      +--> cancelled       (from any state before finished: a live migration aborted)

    (an evacuation)  ... migrating --> done --> completed

- ``queued``: recorded by the API role; the scheduler is being asked.
- ``pre-migrating``: a destination is claimed; it prepares. Again
  ``pre-migrating`` when the move goes on to the next alternate.
- ``migrating``: the source hands the instance over.
- ``finished``: the destination runs it; a cold migration or resize
  waits there for confirm or revert (the source allocation is still the
  migration's); one asked with ``confirm_at_finish`` (a host drain's) is
  confirmed by the cell conductor at once, its instance
  ``resize_confirming`` from the moment it is ``finished``.
- final: ``confirmed`` (the migration's allocation dropped), ``reverted``
  (back on the source, its allocation the instance's again), ``error``
  (a cold move that could not be done: the instance is ACTIVE on its
  source; ``error`` names every host tried and why), and ``done`` /
  ``failed``, the endings of live migrations and evacuations, and
  ``cancelled`` (Nova's word for it): a live migration aborted before its
  switch-over, ACTIVE on its source with its own allocation, the
  destination's claim dropped.
- ``completed``: an evacuation's source host came back, destroyed its copy
  and freed the source allocation the migration held while it was away
  (``done`` -> ``completed``, the one change from a final status: an
  evacuation ``done`` awaits that cleanup; see ``awaits_cleanup``).
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cellplane.db.cell.models import migrations
from cellplane.db.columns import utcnow
from rpc_schemas.flavor import Flavor
from rpc_schemas.migration import EVACUATION, LIVE_MIGRATION, MIGRATION, RESIZE
from rpc_schemas.migration import Migration as MigrationPayload

# migration_type: the wire contract's (the Migration payload).
TYPES = (MIGRATION, RESIZE, LIVE_MIGRATION, EVACUATION)

# status
QUEUED = 'queued'
PRE_MIGRATING = 'pre-migrating'
MIGRATING = 'migrating'
FINISHED = 'finished'
CONFIRMED = 'confirmed'
REVERTED = 'reverted'
ERROR = 'error'
DONE = 'done'
FAILED = 'failed'
COMPLETED = 'completed'
CANCELLED = 'cancelled'
STATUSES = (QUEUED, PRE_MIGRATING, MIGRATING, FINISHED, CONFIRMED, REVERTED, ERROR,
            DONE, FAILED, COMPLETED, CANCELLED)
FINAL = frozenset({CONFIRMED, REVERTED, ERROR, DONE, FAILED, COMPLETED, CANCELLED})

# status -> the statuses it may go to.
TRANSITIONS: dict[str, frozenset[str]] = {
    QUEUED: frozenset({PRE_MIGRATING, ERROR, FAILED, CANCELLED}),
    PRE_MIGRATING: frozenset({PRE_MIGRATING, MIGRATING, ERROR, FAILED, CANCELLED}),
    MIGRATING: frozenset({PRE_MIGRATING, FINISHED, DONE, ERROR, FAILED, CANCELLED}),
    FINISHED: frozenset({CONFIRMED, REVERTED, ERROR}),
    **{final: frozenset() for final in FINAL},
    # An evacuation's source host is cleaned once it comes back.
    DONE: frozenset({COMPLETED}),
}


def ending_of(migration: 'Migration', succeeded: bool) -> str:
    """How a migration of its type ends: a cold one ``finished`` or ``error``, a live one ``done`` or ``failed``."""
    if migration.migration_type in (LIVE_MIGRATION, EVACUATION):
        return DONE if succeeded else FAILED
    return FINISHED if succeeded else ERROR


def awaits_cleanup(migration: 'Migration') -> bool:
    """An evacuation over whose source host has not come back: its consumer holds the source's allocation by design."""
    return migration.migration_type == EVACUATION and migration.status == DONE


def allowed_from(status: str) -> list[str]:
    """The statuses a migration may be in to go to ``status``."""
    return sorted(s for s, targets in TRANSITIONS.items() if status in targets)


class MigrationNotFound(Exception):
    """No migration with this uuid in this cell."""


class InvalidMigrationTransition(Exception):
    """The migration is not in a status it may go to the wanted one from."""

    def __init__(self, uuid: str, current: str, wanted: str) -> None:
        allowed = sorted(TRANSITIONS.get(current, ()))
        super().__init__(
            f'migration {uuid} is {current}: it cannot become {wanted} (from {current} '
            f'it may become {", ".join(allowed) if allowed else "nothing: it is over"})')
        self.current = current
        self.wanted = wanted


@dataclasses.dataclass(frozen=True)
class Migration:
    uuid: str
    instance_uuid: str
    migration_type: str
    status: str
    source_host: str
    source_node: str
    dest_host: str | None
    dest_node: str | None
    old_flavor: Flavor
    new_flavor: Flavor
    error: str | None
    request_id: str | None
    id: int | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    # Confirmed by the cell conductor as soon as it finishes (a host drain's cold move).
    confirm_at_finish: bool = False

    @property
    def final(self) -> bool:
        return self.status in FINAL

    def payload(self) -> MigrationPayload:
        """What travels with the move (``rpc_schemas.migration``)."""
        return MigrationPayload(uuid=self.uuid, instance_uuid=self.instance_uuid,
                                migration_type=self.migration_type,
                                source_host=self.source_host, source_node=self.source_node,
                                old_flavor=self.old_flavor, new_flavor=self.new_flavor)

    @classmethod
    def from_row(cls, row) -> 'Migration':
        return cls(uuid=row['uuid'], instance_uuid=row['instance_uuid'],
                   migration_type=row['migration_type'], status=row['status'],
                   source_host=row['source_host'], source_node=row['source_node'],
                   dest_host=row['dest_host'], dest_node=row['dest_node'],
                   old_flavor=Flavor.from_primitive(row['old_flavor']),
                   new_flavor=Flavor.from_primitive(row['new_flavor']),
                   error=row['error'], request_id=row['request_id'], id=row['id'],
                   created_at=row['created_at'], updated_at=row['updated_at'],
                   finished_at=row['finished_at'],
                   confirm_at_finish=bool(row['confirm_at_finish']))


def create(conn: Connection, *, uuid: str, instance_uuid: str, migration_type: str,
           source_host: str, source_node: str, old_flavor: Flavor, new_flavor: Flavor,
           request_id: str | None = None, dest_host: str | None = None,
           confirm_at_finish: bool = False) -> Migration:
    """A new migration, ``queued`` (``dest_host``: the host the caller named, if any).

    ``confirm_at_finish`` (a cold migration or resize): the cell conductor
    confirms it as soon as the destination runs it (``conductor/cell/moves.py``),
    nobody being asked to.
    """
    if confirm_at_finish and migration_type not in (MIGRATION, RESIZE):
        raise ValueError(f'only a cold migration or resize is confirmed, not a '
                         f'{migration_type}')
    if migration_type not in TYPES:
        raise ValueError(f'unknown migration type {migration_type!r} (one of '
                         f'{", ".join(TYPES)})')
    now = utcnow()
    row = conn.execute(_CREATE, dict(
        uuid=uuid, instance_uuid=instance_uuid, migration_type=migration_type,
        status=QUEUED, source_host=source_host, source_node=source_node,
        old_flavor=old_flavor.to_primitive(), new_flavor=new_flavor.to_primitive(),
        dest_host=dest_host, request_id=request_id, confirm_at_finish=confirm_at_finish,
        created_at=now, updated_at=now)).mappings().one()
    return Migration.from_row(row)


# Every step of every move reads or writes its migration with one of these:
# built once, not per call (building a statement and its cache key costs about
# what running it does; see cellplane/objects/flavors.py's _BY_ID).
# create's INSERT gives the row back as written: no second read.
_CREATE = migrations.insert().returning(*migrations.c)
_BY_UUID = sa.select(migrations).where(migrations.c.uuid == sa.bindparam('b_uuid'))
_PROGRESS = sa.select(migrations.c.uuid, migrations.c.status, migrations.c.dest_host,
                      migrations.c.error, migrations.c.confirm_at_finish).where(
    migrations.c.uuid.in_(sa.bindparam('b_uuids', expanding=True)))
# advance's compare-and-set: the SET columns come from the parameters.
_ADVANCE = migrations.update().where(
    migrations.c.uuid == sa.bindparam('b_uuid'),
    migrations.c.status.in_(sa.bindparam('b_from', expanding=True))).returning(*migrations.c)
_ADVANCE_UNCHANGED = _ADVANCE.where(
    migrations.c.updated_at == sa.bindparam('b_unchanged_since'))
# copying's: pre-migrating to this destination, and only then, goes migrating.
_COPYING = migrations.update().where(
    migrations.c.uuid == sa.bindparam('b_uuid'), migrations.c.status == PRE_MIGRATING,
    migrations.c.dest_host == sa.bindparam('b_dest_host')).values(
        status=MIGRATING, updated_at=sa.bindparam('b_now')).returning(*migrations.c)
_TAKE = migrations.update().where(
    migrations.c.uuid == sa.bindparam('b_uuid'), migrations.c.status == QUEUED,
    migrations.c.updated_at == sa.bindparam('b_updated_at'))


def get(conn: Connection, uuid: str) -> Migration:
    """The migration; ``MigrationNotFound`` if this cell has none with that uuid."""
    row = conn.execute(_BY_UUID, {'b_uuid': uuid}).mappings().first()
    if row is None:
        raise MigrationNotFound(f'no migration {uuid} in this cell')
    return Migration.from_row(row)


@dataclasses.dataclass(frozen=True)
class Progress:
    """How far a migration is: what one who waits for it reads (``progress_of``), no flavors decoded."""

    uuid: str
    status: str
    dest_host: str | None
    error: str | None
    confirm_at_finish: bool


def progress_of(conn: Connection, uuids: Sequence[str]) -> dict[str, Progress]:
    """The progress of this cell's migrations among ``uuids``, by uuid (one statement; those not here left out).

    What a host drain polls its moves in flight with, every poll: the few
    columns it reads, as tuples (a whole ``Migration`` decodes two flavors).
    """
    if not uuids:
        return {}
    return {uuid: Progress(uuid, status, dest_host, error, bool(confirm))
            for uuid, status, dest_host, error, confirm
            in conn.execute(_PROGRESS, {'b_uuids': list(uuids)})}


def get_by_id(conn: Connection, migration_id: int) -> Migration:
    """The migration by its row id (the compute API's migration id); ``MigrationNotFound`` if none."""
    row = conn.execute(sa.select(migrations).where(
        migrations.c.id == migration_id)).mappings().first()
    if row is None:
        raise MigrationNotFound(f'no migration with id {migration_id} in this cell')
    return Migration.from_row(row)


def find(conn: Connection, *, instance_uuid: str | None = None,
         statuses: Sequence[str] | None = None, host: str | None = None,
         source_host: str | None = None, migration_type: str | None = None) -> list[Migration]:
    """Migrations, oldest first: all, or those matching every filter given.

    ``host``: from or to that host (source or destination); ``source_host``
    from it only.
    """
    query = sa.select(migrations).order_by(migrations.c.id)
    if instance_uuid is not None:
        query = query.where(migrations.c.instance_uuid == instance_uuid)
    if statuses is not None:
        query = query.where(migrations.c.status.in_(list(statuses)))
    if host is not None:
        query = query.where(sa.or_(migrations.c.source_host == host,
                                   migrations.c.dest_host == host))
    if source_host is not None:
        query = query.where(migrations.c.source_host == source_host)
    if migration_type is not None:
        query = query.where(migrations.c.migration_type == migration_type)
    return [Migration.from_row(r) for r in conn.execute(query).mappings().all()]


def in_progress(conn: Connection, instance_uuid: str) -> Migration | None:
    """The instance's migration that is not over, if any (there is at most one)."""
    found = find(conn, instance_uuid=instance_uuid,
                 statuses=[s for s in STATUSES if s not in FINAL])
    return found[-1] if found else None


def advance(conn: Connection, uuid: str, status: str, *, dest_host: str | None = None,
            dest_node: str | None = None, error: str | None = None,
            unchanged_since: datetime.datetime | None = None) -> Migration:
    """Move the migration to ``status`` if its state machine allows it; the migration after.

    A compare-and-set on the statuses it may come from, so of two writers
    racing (a confirm and a revert) one wins and the other gets
    ``InvalidMigrationTransition``. ``dest_host``/``dest_node`` (the
    destination tried now) and ``error`` are set when given.
    ``unchanged_since`` (the ``updated_at`` read) refuses it too if the
    migration changed since, even to a status it may go on from.
    """
    if status not in TRANSITIONS:
        raise ValueError(f'unknown migration status {status!r}')
    now = utcnow()
    values: dict = {'status': status, 'updated_at': now}
    if dest_host is not None:
        values.update(dest_host=dest_host, dest_node=dest_node)
    if error is not None:
        values['error'] = error
    if status in FINAL:
        values['finished_at'] = now
    params = {'b_uuid': uuid, 'b_from': allowed_from(status), **values}
    if unchanged_since is not None:
        params['b_unchanged_since'] = unchanged_since
    # One statement in the usual case: the row as written comes back with it;
    # only a refused change reads the migration, to say what it is.
    query = _ADVANCE if unchanged_since is None else _ADVANCE_UNCHANGED
    row = conn.execute(query, params).mappings().first()
    if row is not None:
        return Migration.from_row(row)
    current = get(conn, uuid)   # MigrationNotFound if there is none
    raise InvalidMigrationTransition(uuid, current.status, status)


def copying(conn: Connection, uuid: str, dest_host: str) -> Migration | None:
    """A ``pre-migrating`` migration to ``dest_host`` goes ``migrating`` (its source handed over); else None.

    ``advance`` to ``migrating`` with its destination checked in the same
    statement: the hand-over of a destination the move has left is refused.
    """
    row = conn.execute(_COPYING, {'b_uuid': uuid, 'b_dest_host': dest_host,
                                  'b_now': utcnow()}).mappings().first()
    return None if row is None else Migration.from_row(row)


def awaiting_cleanup(conn: Connection, source_hosts: Sequence[str]) -> list[Migration]:
    """The evacuations from ``source_hosts`` that await their source's cleanup (``done``), oldest first."""
    if not source_hosts:
        return []
    query = sa.select(migrations).where(
        migrations.c.migration_type == EVACUATION, migrations.c.status == DONE,
        migrations.c.source_host.in_(list(source_hosts))).order_by(migrations.c.id)
    return [Migration.from_row(r) for r in conn.execute(query).mappings().all()]


def take(conn: Connection, uuid: str, *,
         updated_at: datetime.datetime) -> datetime.datetime | None:
    """Hold a ``queued`` migration to schedule it: its ``updated_at`` from ``updated_at`` to now; that stamp.

    A compare-and-set, so of two super conductors (the one its message
    reached, one resuming it as lost) exactly one schedules it. The first
    take of a migration passes its ``created_at``: a migration never taken
    still has ``updated_at == created_at``.

    The stamp written (None: not taken) travels with the move to the cell
    conductor (``move_instance``'s ``taken_at``), which starts the move only
    if the migration is unchanged since: a hand-over of a take that was
    taken over (resumed as lost) or cancelled since is refused.
    """
    now = utcnow()
    done = conn.execute(_TAKE, {'b_uuid': uuid, 'b_updated_at': updated_at,
                                'updated_at': now})
    return now if done.rowcount else None


def delete_for_instance(conn: Connection, instance_uuid: str) -> None:
    """Remove every migration of the instance (it is being purged)."""
    conn.execute(migrations.delete().where(migrations.c.instance_uuid == instance_uuid))
