"""Resource classes: the standard ones (fixed ids) and CUSTOM_* ones.

A standard class's id is its index in ``os_resource_classes.STANDARDS``;
new releases of that package only append, so ids never move. Custom
classes get ids from ``CUSTOM_RESOURCE_CLASS_ID_BASE`` up. Name <-> id of a
standard class needs no query.
"""
from __future__ import annotations

import os_resource_classes
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement import errors
from placement.db import api as db_api
from placement.db.models import CUSTOM_RESOURCE_CLASS_ID_BASE, allocations, inventories
from placement.db.models import resource_classes as rc_t

STANDARDS: list[str] = list(os_resource_classes.STANDARDS)
STANDARD_IDS: dict[str, int] = {name: i for i, name in enumerate(STANDARDS)}
STANDARD_NAMES: dict[int, str] = dict(enumerate(STANDARDS))


class ResourceClassNotFound(errors.NotFound):
    pass


def is_custom(name: str) -> bool:
    return name.startswith(os_resource_classes.CUSTOM_NAMESPACE)


def sync_standard(conn: Connection) -> None:
    """Insert the standard classes the database lacks (one query when none)."""
    present = set(conn.execute(
        sa.select(rc_t.c.id).where(rc_t.c.id < CUSTOM_RESOURCE_CLASS_ID_BASE)).scalars())
    now = db_api.utcnow()
    missing = [{'id': i, 'name': n, 'created_at': now, 'updated_at': now}
               for i, n in enumerate(STANDARDS) if i not in present]
    if missing:
        conn.execute(rc_t.insert(), missing)


def ids_by_name(conn: Connection, names) -> dict[str, int]:
    """{name: id} for ``names``; unknown names are simply absent."""
    found = {}
    custom = []
    for name in names:
        rc_id = STANDARD_IDS.get(name)
        if rc_id is not None:
            found[name] = rc_id
        else:
            custom.append(name)
    if custom:
        rows = conn.execute(sa.select(rc_t.c.name, rc_t.c.id)
                            .where(rc_t.c.name.in_(custom)))
        found.update({name: rc_id for name, rc_id in rows})
    return found


def names_by_id(conn: Connection, ids) -> dict[int, str]:
    """{id: name} for ``ids``."""
    found = {}
    custom = []
    for rc_id in ids:
        name = STANDARD_NAMES.get(rc_id)
        if name is not None:
            found[rc_id] = name
        else:
            custom.append(rc_id)
    if custom:
        rows = conn.execute(sa.select(rc_t.c.id, rc_t.c.name)
                            .where(rc_t.c.id.in_(custom)))
        found.update(dict(rows.all()))
    return found


def get(conn: Connection, name: str):
    """The row (id, name, created_at, updated_at) of class ``name`` or 404."""
    row = conn.execute(sa.select(rc_t).where(rc_t.c.name == name)).first()
    if row is None:
        raise ResourceClassNotFound(f'No such resource class {name}.')
    return row


def list_all(conn: Connection):
    return conn.execute(sa.select(rc_t).order_by(rc_t.c.id)).all()


def create(conn: Connection, name: str) -> None:
    """Create custom class ``name``; 409 if it exists.

    Ids are max(id) + 1 from CUSTOM_RESOURCE_CLASS_ID_BASE: two concurrent
    creations may pick the same id, and the loser simply tries the next.
    """
    for _attempt in range(10):
        if conn.execute(sa.select(rc_t.c.id).where(rc_t.c.name == name)).first():
            # No code, as the reference: its duplicate_name is a provider's.
            raise errors.Conflict(f'Conflicting resource class already exists: {name}')
        next_id = conn.execute(sa.select(sa.func.max(rc_t.c.id))).scalar() or 0
        next_id = max(next_id + 1, CUSTOM_RESOURCE_CLASS_ID_BASE)
        now = db_api.utcnow()
        try:
            with conn.begin_nested():
                conn.execute(rc_t.insert().values(
                    id=next_id, name=name, created_at=now, updated_at=now))
            return
        except sa.exc.IntegrityError:
            continue   # same name (409 on the next turn) or same id (retry)
    raise errors.Conflict(f'Could not create resource class {name}: too many '
                          'concurrent creations, please retry.',
                          code=errors.CONCURRENT_UPDATE)


def rename(conn: Connection, old: str, new: str):
    """Rename custom class ``old`` to ``new``; the updated row."""
    if old in STANDARD_IDS:
        raise errors.BadRequest(f'Cannot update standard resource class {old}')
    row = get(conn, old)
    if conn.execute(sa.select(rc_t.c.id).where(rc_t.c.name == new)).first():
        raise errors.Conflict(f'Resource class already exists: {new}')
    now = db_api.utcnow()
    conn.execute(rc_t.update().where(rc_t.c.id == row.id)
                 .values(name=new, updated_at=now))
    return get(conn, new)


def delete(conn: Connection, name: str) -> None:
    if name in STANDARD_IDS:
        raise errors.BadRequest(f'Cannot delete standard resource class {name}')
    row = get(conn, name)
    in_use = conn.execute(
        sa.select(sa.literal(1)).select_from(inventories)
        .where(inventories.c.resource_class_id == row.id).limit(1)).first()
    if in_use is None:
        in_use = conn.execute(
            sa.select(sa.literal(1)).select_from(allocations)
            .where(allocations.c.resource_class_id == row.id).limit(1)).first()
    if in_use is not None:
        raise errors.Conflict(
            f'Error in delete resource class: Class is in use in inventory: {name}')
    conn.execute(rc_t.delete().where(rc_t.c.id == row.id))
