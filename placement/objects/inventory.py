"""Inventories of a provider: read, replace all, add, update, delete one.

Every change refuses to remove a class that has allocations: 409
placement.inventory.inuse. Shrinking a class below what is allocated
against it ((total - reserved) * allocation_ratio < used) is allowed and
logged, as in the reference, whose own tests require it ("We can change
inventory in a way that makes existing allocations exceed the new
capacity"): a compute host whose reserved memory grows must still be able
to report it. ``REFUSE_OVER_CAPACITY = True`` makes that a 409 inuse too.
The caller checks and bumps the provider generation in the same
transaction.
"""
from __future__ import annotations

import logging

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement import errors
from placement.db import api as db_api
from placement.db.models import allocations as alloc_t
from placement.db.models import inventories as inv_t

LOG = logging.getLogger(__name__)

# See the module docstring: the reference allows over-capacity inventory.
REFUSE_OVER_CAPACITY = False

FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
          'allocation_ratio')
DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': 0x7FFFFFFF,
            'step_size': 1, 'allocation_ratio': 1.0}

_COLUMNS = [inv_t.c.resource_class_id, *(inv_t.c[f] for f in FIELDS),
            inv_t.c.created_at, inv_t.c.updated_at]


def with_defaults(data: dict) -> dict:
    """The inventory fields of ``data``, defaults filled in."""
    return {f: data.get(f, DEFAULTS.get(f)) for f in FIELDS}


def capacity(inv: dict) -> int:
    return int((inv['total'] - inv['reserved']) * inv['allocation_ratio'])


def check_capacity(mv, rc_name: str, rp_uuid: str, inv: dict) -> None:
    """400-worthy: reserved >= total (reserved > total from 1.26)."""
    cap = capacity(inv)
    if mv >= (1, 26):
        if cap < 0:
            raise ValueError(
                f"Invalid inventory for '{rc_name}' on resource provider "
                f"'{rp_uuid}'. The reserved value is greater than total.")
    elif cap <= 0:
        raise ValueError(
            f"Invalid inventory for '{rc_name}' on resource provider "
            f"'{rp_uuid}'. The reserved value is greater than or equal to total.")


def get_all(conn: Connection, rp_id: int) -> dict[int, object]:
    """{resource_class_id: row} of the provider's inventory."""
    rows = conn.execute(sa.select(*_COLUMNS)
                        .where(inv_t.c.resource_provider_id == rp_id)).all()
    return {r.resource_class_id: r for r in rows}


def get_one(conn: Connection, rp_id: int, rc_id: int):
    return conn.execute(sa.select(*_COLUMNS).where(
        inv_t.c.resource_provider_id == rp_id,
        inv_t.c.resource_class_id == rc_id)).first()


def usages(conn: Connection, rp_id: int) -> dict[int, int]:
    """{resource_class_id: total used} of the provider's allocations."""
    return {rc: int(used) for rc, used in conn.execute(
        sa.select(alloc_t.c.resource_class_id, sa.func.sum(alloc_t.c.used))
        .where(alloc_t.c.resource_provider_id == rp_id)
        .group_by(alloc_t.c.resource_class_id))}


class InventoryInUse(errors.Conflict):
    def __init__(self, detail: str):
        super().__init__(detail, code=errors.INVENTORY_INUSE)


def _check_in_use(names: dict[int, str], rp_uuid: str, used: dict[int, int],
                  removed, changed: dict[int, dict]) -> None:
    # Classes named in id order, as the reference does.
    busy = [names[rc] for rc in sorted(removed) if used.get(rc, 0) > 0]
    if busy:
        raise InventoryInUse(
            f"Inventory for '{', '.join(busy)}' on resource provider "
            f"'{rp_uuid}' in use.")
    over = [names[rc] for rc in sorted(changed)
            if used.get(rc, 0) > capacity(changed[rc])]
    if not over:
        return
    if REFUSE_OVER_CAPACITY:
        raise InventoryInUse(
            f"Inventory for '{', '.join(over)}' on resource provider "
            f"'{rp_uuid}' in use: the allocations against it would exceed "
            "its new capacity.")
    LOG.warning('Resource provider %s is now over capacity for %s: its '
                'allocations exceed the new inventory.', rp_uuid, ', '.join(over))


def replace_all(conn: Connection, rp_id: int, rp_uuid: str,
                wanted: dict[int, dict], names: dict[int, str]) -> None:
    """Make the provider's inventory exactly ``wanted`` ({rc_id: fields})."""
    current = get_all(conn, rp_id)
    removed = [rc for rc in current if rc not in wanted]
    changed = {rc: inv for rc, inv in wanted.items()
               if rc in current and any(getattr(current[rc], f) != inv[f] for f in FIELDS)}
    added = {rc: inv for rc, inv in wanted.items() if rc not in current}
    if removed or changed:
        _check_in_use(names, rp_uuid, usages(conn, rp_id), removed, changed)
    if removed:
        conn.execute(inv_t.delete().where(inv_t.c.resource_provider_id == rp_id,
                                          inv_t.c.resource_class_id.in_(removed)))
    now = db_api.utcnow()
    for rc, inv in changed.items():
        conn.execute(inv_t.update().where(inv_t.c.resource_provider_id == rp_id,
                                          inv_t.c.resource_class_id == rc)
                     .values(updated_at=now, **inv))
    if added:
        conn.execute(inv_t.insert(), [
            dict(resource_provider_id=rp_id, resource_class_id=rc,
                 created_at=now, updated_at=now, **inv)
            for rc, inv in added.items()])


def add_one(conn: Connection, rp_id: int, rc_id: int, rc_name: str, inv: dict) -> None:
    if get_one(conn, rp_id, rc_id) is not None:
        raise errors.Conflict(
            f'Update conflict: Inventory for {rc_name} on resource provider '
            f'already exists.', code=errors.CONCURRENT_UPDATE)
    now = db_api.utcnow()
    try:
        with conn.begin_nested():
            conn.execute(inv_t.insert().values(
                resource_provider_id=rp_id, resource_class_id=rc_id,
                created_at=now, updated_at=now, **inv))
    except sa.exc.IntegrityError:
        raise errors.Conflict(
            f'Update conflict: Inventory for {rc_name} on resource provider '
            f'already exists.', code=errors.CONCURRENT_UPDATE) from None


def update_one(conn: Connection, rp_id: int, rp_uuid: str, rc_id: int,
               rc_name: str, inv: dict) -> None:
    if get_one(conn, rp_id, rc_id) is None:
        raise errors.BadRequest(
            'No inventory record with resource class for resource provider '
            f'{rp_uuid}: No inventory of class {rc_name} found.')
    _check_in_use({rc_id: rc_name}, rp_uuid, usages(conn, rp_id), (), {rc_id: inv})
    conn.execute(inv_t.update().where(inv_t.c.resource_provider_id == rp_id,
                                      inv_t.c.resource_class_id == rc_id)
                 .values(updated_at=db_api.utcnow(), **inv))


def delete_one(conn: Connection, rp_id: int, rp_uuid: str, rc_id: int | None,
               rc_name: str) -> None:
    if rc_id is None or get_one(conn, rp_id, rc_id) is None:
        raise errors.NotFound(
            f'No inventory of class {rc_name} found for delete: No inventory '
            f'of class {rc_name} found.')
    used = usages(conn, rp_id)
    if used.get(rc_id, 0) > 0:
        raise InventoryInUse(
            f"Unable to delete inventory of class {rc_name}: Inventory for "
            f"'{rc_name}' on resource provider '{rp_uuid}' in use.")
    conn.execute(inv_t.delete().where(inv_t.c.resource_provider_id == rp_id,
                                      inv_t.c.resource_class_id == rc_id))
