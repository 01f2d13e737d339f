"""Instances and their faults in a cell DB (``instances``, ``instance_faults``): created, changed, read.

The super conductor creates an instance in the cell it chose
(``create_instance`` is the one way to write that row); from then on only
the cell conductor changes it, on its agents' reports: ACTIVE with host,
node and launch time, ERROR with an ``instance_faults`` row, DELETED.
A deleted instance stays deleted: a late report about it changes nothing.
"""
from __future__ import annotations

import datetime
import logging
from typing import Collection, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cellplane.db.cell.models import instance_faults, instances
from cellplane.db.columns import naive_utc, utcnow
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, BUILDING, DELETED, ERROR, SPAWNING, Instance
from rpc_schemas.instance_update import InstanceUpdate

LOG = logging.getLogger(__name__)

# vm_state of an instance a cold migration or resize moved, waiting for its
# confirm or revert (Nova's RESIZED, shown VERIFY_RESIZE). Only the cell
# database holds it: every payload of a moving instance says ACTIVE.
RESIZED = 'resized'
# task_state of a moving instance (Nova's names).
RESIZE_PREP = 'resize_prep'            # the move is asked for: scheduling
RESIZE_MIGRATING = 'resize_migrating'  # a destination prepares, the source hands over
RESIZE_CONFIRMING = 'resize_confirming'
RESIZE_REVERTING = 'resize_reverting'
MIGRATING = 'migrating'                # a live migration (Nova's MIGRATING status)
REBUILDING = 'rebuilding'              # an evacuation (Nova's REBUILD status)
MOVE_TASK_STATES = (RESIZE_PREP, RESIZE_MIGRATING, RESIZE_CONFIRMING, RESIZE_REVERTING,
                    MIGRATING, REBUILDING)

# instance_faults.code: the build failed on this cell's hosts (HTTP-like, as Nova).
FAULT_CODE_BUILD = 500
FAULT_MESSAGE_LENGTH = 255   # instance_faults.message is a String(255)


class InstanceNotFound(Exception):
    """The cell DB has no instance with this UUID (not created here, or in another cell)."""


def create_instance(conn: Connection, instance: Instance) -> None:
    """Insert ``instance`` as the super conductor creates it in the chosen cell."""
    create_instances(conn, [instance])


def create_instances(conn: Connection, new: Sequence[Instance]) -> None:
    """``create_instance`` for several, in one statement."""
    now = utcnow()
    conn.execute(instances.insert(), [dict(
        uuid=instance.uuid, display_name=instance.display_name,
        project_id=instance.project_id, user_id=instance.user_id,
        host=instance.host, node=instance.node,
        flavor=instance.flavor.to_primitive(), vm_state=instance.vm_state,
        task_state=instance.task_state, availability_zone=instance.availability_zone,
        launched_at=naive_utc(instance.launched_at) if instance.launched_at else None,
        image_ref=instance.image_ref, description=instance.description,
        launch_index=instance.launch_index, created_at=now, updated_at=now)
        for instance in new])


# Every step of a move reads its instance with it: built once (see _APPLY below).
_BY_UUID = sa.select(instances).where(instances.c.uuid == sa.bindparam('b_uuid'))


def get_instance(conn: Connection, uuid: str) -> dict | None:
    row = conn.execute(_BY_UUID, {'b_uuid': uuid}).mappings().first()
    return dict(row) if row else None


def get_many(conn: Connection, uuids: Sequence[str], *, flavor_text: bool = False
             ) -> list[dict]:
    """The rows of those of ``uuids`` that are in this cell.

    ``flavor_text``: the flavor as its stored JSON text, not decoded, for a
    reader of many rows that decodes each distinct flavor once (a list of a
    thousand servers has few flavors).
    """
    columns = [instances] if not flavor_text else [
        *(c for c in instances.c if c.name != 'flavor'),
        sa.cast(instances.c.flavor, sa.Text).label('flavor')]
    rows = conn.execute(sa.select(*columns).where(
        instances.c.uuid.in_(list(uuids)))).mappings().all()
    return [dict(r) for r in rows]


def states_of(conn: Connection, uuids: Sequence[str]) -> list[tuple[str, str, str | None, str | None]]:
    """(uuid, vm_state, task_state, host) of those of ``uuids`` that are in this cell."""
    return [tuple(r) for r in conn.execute(
        sa.select(instances.c.uuid, instances.c.vm_state, instances.c.task_state,
                  instances.c.host).where(instances.c.uuid.in_(list(uuids))))]


# What a server list shows of an instance, in this order (``view_rows``).
VIEW_COLUMNS = ('uuid', 'display_name', 'vm_state', 'task_state', 'flavor', 'host', 'node',
                'created_at', 'updated_at', 'project_id', 'user_id', 'availability_zone',
                'launched_at', 'image_ref', 'description', 'launch_index')
_VIEW_SELECT = tuple(sa.cast(instances.c.flavor, sa.Text).label('flavor') if name == 'flavor'
                     else instances.c[name] for name in VIEW_COLUMNS)


def view_rows(conn: Connection, uuids: Sequence[str], *, project_id: str | None = None,
              changed_since: datetime.datetime | None = None,
              vm_states: Collection[str] | None = None) -> list[tuple]:
    """Those of ``uuids`` this cell has, as tuples of ``VIEW_COLUMNS`` (the flavor as its
    JSON text), for a list of thousands: no dict or attribute lookup per row.

    With ``project_id`` (the owner of every one of ``uuids``) the cell is asked
    for the project's rows rather than for a thousand uuids, and those not in
    ``uuids`` are left out here. ``changed_since`` leaves out the rows updated
    before it (a row never updated is kept); ``vm_states`` those in another
    vm_state.
    """
    query = sa.select(*_VIEW_SELECT)
    if changed_since is not None:
        query = query.where(sa.or_(instances.c.updated_at >= changed_since,
                                   instances.c.updated_at.is_(None)))
    if vm_states is not None:
        query = query.where(instances.c.vm_state.in_(sorted(vm_states)))
    # Fetched at once (iterating a result asks the driver for one row at a time).
    if project_id is None:
        return [tuple(row) for row in conn.execute(query.where(
            instances.c.uuid.in_(list(uuids)))).all()]
    wanted = set(uuids)
    return [tuple(row) for row in conn.execute(query.where(
        instances.c.project_id == project_id)).all() if row[0] in wanted]


def present(conn: Connection, uuids: Sequence[str], *, project_id: str | None = None
            ) -> set[str]:
    """Those of ``uuids`` this cell has a row of (``project_id``: their owner, as in ``view_rows``)."""
    query = sa.select(instances.c.uuid)
    if project_id is None:
        return set(conn.execute(query.where(instances.c.uuid.in_(list(uuids)))).scalars())
    return set(conn.execute(query.where(instances.c.project_id == project_id)).scalars()
               ) & set(uuids)


def list_all(conn: Connection) -> list[dict]:
    """Every instance row of this cell (deleted ones included)."""
    return [dict(r) for r in conn.execute(sa.select(instances)).mappings().all()]


def active_in_window(conn: Connection, start: datetime.datetime, stop: datetime.datetime, *,
                     project_id: str | None = None) -> list[dict]:
    """The instances that ran during [``start``, ``stop``) (naive UTC), by project then uuid.

    Launched before ``stop`` and not deleted before ``start``, as Nova's
    ``instance_get_active_by_window_joined``: ``{"uuid", "display_name",
    "project_id", "flavor", "vm_state", "launched_at", "deleted_at"}`` each.
    """
    query = (sa.select(instances.c.uuid, instances.c.display_name, instances.c.project_id,
                       instances.c.flavor, instances.c.vm_state, instances.c.launched_at,
                       instances.c.deleted_at)
             .where(instances.c.launched_at.is_not(None), instances.c.launched_at < stop,
                    sa.or_(instances.c.deleted_at.is_(None), instances.c.deleted_at > start))
             .order_by(instances.c.project_id, instances.c.uuid))
    if project_id is not None:
        query = query.where(instances.c.project_id == project_id)
    return [dict(r) for r in conn.execute(query).mappings().all()]


def placed(conn: Connection, hosts: Sequence[str] | None = None) -> list[dict]:
    """The instances not deleted that have a host (one of ``hosts`` when given), by creation:
    ``{"uuid", "display_name", "host", "node"}`` each."""
    query = (sa.select(instances.c.uuid, instances.c.display_name, instances.c.host,
                       instances.c.node)
             .where(instances.c.host.is_not(None), instances.c.vm_state != DELETED)
             .order_by(instances.c.id))
    if hosts is not None:
        query = query.where(instances.c.host.in_(list(hosts)))
    return [dict(r) for r in conn.execute(query).mappings().all()]


def delete(conn: Connection, uuid: str) -> None:
    """Remove the instance's row (its faults too); its actions are ``instance_actions``'."""
    conn.execute(instance_faults.delete().where(instance_faults.c.instance_uuid == uuid))
    conn.execute(instances.delete().where(instances.c.uuid == uuid))


def _current_vm_state(conn: Connection, uuid: str) -> str:
    state = conn.execute(sa.select(instances.c.vm_state)
                         .where(instances.c.uuid == uuid)
                         .with_for_update()).scalar()
    if state is None:
        raise InstanceNotFound(
            f'instance {uuid} is not in this cell\'s database: was it created in '
            f'another cell, or never created by the super conductor?')
    return state


# Built once, not per report: building a statement and its cache key costs
# more CPU than running it (the SET columns come from the parameters).
_APPLY = instances.update().where(instances.c.uuid == sa.bindparam('b_uuid'),
                                  instances.c.vm_state != DELETED)


def apply_update(conn: Connection, update: InstanceUpdate) -> bool:
    """Apply an agent's report; False if the instance was already deleted (left as is)."""
    now = utcnow()
    values = {'vm_state': update.vm_state, 'task_state': update.task_state,
              'updated_at': now}
    if update.vm_state == ACTIVE:
        values.update(host=update.host, node=update.node,
                      launched_at=naive_utc(update.launched_at or now))
    elif update.vm_state == DELETED:
        values['deleted_at'] = now
    elif update.host is not None:
        values.update(host=update.host, node=update.node)
    # One statement in the usual case: the row is updated unless deleted,
    # and only when it was not is it read to say why.
    if conn.execute(_APPLY, {'b_uuid': update.instance_uuid, **values}).rowcount:
        return True
    _current_vm_state(conn, update.instance_uuid)   # InstanceNotFound if it is not here
    LOG.warning('Ignored %s for instance %s: it is deleted',
                update.vm_state, update.instance_uuid)
    return False


def set_spawning(conn: Connection, uuid: str) -> bool:
    """Its host began the build: task_state spawning; False (nothing changed) unless it is building."""
    done = conn.execute(instances.update().where(
        instances.c.uuid == uuid, instances.c.vm_state == BUILDING).values(
        task_state=SPAWNING, updated_at=utcnow()))
    return done.rowcount == 1


def set_building(conn: Connection, uuid: str, task_state: str | None) -> bool:
    """Back to building on no host (a reschedule in progress); False if it was deleted."""
    if _current_vm_state(conn, uuid) == DELETED:
        return False
    conn.execute(instances.update().where(instances.c.uuid == uuid).values(
        vm_state=BUILDING, task_state=task_state, host=None, node=None,
        updated_at=utcnow()))
    return True


# The steps of every move write with these: built once (see _APPLY above); the
# SET columns come from the parameters.
_RETAKE = instances.update().where(instances.c.uuid == sa.bindparam('b_uuid'),
                                   instances.c.task_state == sa.bindparam('b_task_state'),
                                   instances.c.updated_at == sa.bindparam('b_updated_at'))
_UNLESS_DELETED = instances.update().where(instances.c.uuid == sa.bindparam('b_uuid'),
                                           instances.c.vm_state != DELETED)
_UNLESS_DELETED_IF_TASK = _UNLESS_DELETED.where(
    instances.c.task_state == sa.bindparam('b_expected'))


def begin_task(conn: Connection, uuid: str, *, vm_state: str, task_state: str) -> bool:
    """Start ``task_state`` on an instance in ``vm_state`` doing nothing else; False if it is not.

    A compare-and-set: of two moves (or a confirm and a revert) asked at
    once, one begins.
    """
    done = conn.execute(instances.update().where(
        instances.c.uuid == uuid, instances.c.vm_state == vm_state,
        instances.c.task_state.is_(None)).values(task_state=task_state,
                                                 updated_at=utcnow()))
    return done.rowcount == 1


def retake_task(conn: Connection, uuid: str, *, task_state: str,
                updated_at: datetime.datetime) -> bool:
    """Take over ``task_state`` left by a dead process: ``updated_at`` from the one read to now.

    A compare-and-set, so of several takers (two super conductors finishing
    the confirm a dead one began) exactly one goes on; False if the row
    changed since it was read.
    """
    done = conn.execute(_RETAKE, {'b_uuid': uuid, 'b_task_state': task_state,
                                  'b_updated_at': updated_at, 'updated_at': utcnow()})
    return done.rowcount == 1


def set_task_state(conn: Connection, uuid: str, task_state: str | None, *,
                   expected: str | None = None) -> bool:
    """Set the task state (only if it is ``expected`` now, when given); False if not set."""
    params = {'b_uuid': uuid, 'task_state': task_state, 'updated_at': utcnow()}
    if expected is None:
        return conn.execute(_UNLESS_DELETED, params).rowcount == 1
    return conn.execute(_UNLESS_DELETED_IF_TASK,
                        {**params, 'b_expected': expected}).rowcount == 1


def place_after_move(conn: Connection, uuid: str, *, host: str, node: str,
                     flavor: Flavor, vm_state: str, task_state: str | None = None) -> bool:
    """The instance runs on ``host``/``node`` at ``flavor`` (a move finished or reverted); False if deleted.

    ``task_state``: what it does next (``resize_confirming``: a move its
    cell conductor confirms at once), else nothing.
    """
    done = conn.execute(_UNLESS_DELETED, {
        'b_uuid': uuid, 'host': host, 'node': node, 'flavor': flavor.to_primitive(),
        'vm_state': vm_state, 'task_state': task_state, 'updated_at': utcnow()})
    return done.rowcount == 1


def set_error(conn: Connection, uuid: str, *, message: str, details: str,
              host: str | None = None) -> None:
    """ERROR, with a fault row whose message and details say why."""
    if _current_vm_state(conn, uuid) == DELETED:
        LOG.warning('Instance %s is deleted; not setting it to ERROR (%s)', uuid, message)
        return
    now = utcnow()
    conn.execute(instances.update().where(instances.c.uuid == uuid).values(
        vm_state=ERROR, task_state=None, updated_at=now))
    if len(message) > FAULT_MESSAGE_LENGTH:
        message = message[:FAULT_MESSAGE_LENGTH - 1] + '\u2026'
    conn.execute(instance_faults.insert().values(
        instance_uuid=uuid, code=FAULT_CODE_BUILD, message=message, details=details,
        host=host, created_at=now, updated_at=now))


def faults(conn: Connection, uuid: str) -> list[dict]:
    """The instance's faults, oldest first."""
    return faults_of_many(conn, [uuid]).get(uuid, [])


def faults_of_many(conn: Connection, uuids: Sequence[str]) -> dict[str, list[dict]]:
    """Each instance's faults, oldest first (instances without any left out)."""
    rows = conn.execute(sa.select(instance_faults)
                        .where(instance_faults.c.instance_uuid.in_(list(uuids)))
                        .order_by(instance_faults.c.id)).mappings().all()
    found: dict[str, list[dict]] = {}
    for r in rows:
        found.setdefault(r['instance_uuid'], []).append(dict(r))
    return found
