"""Usages of one provider: the sum of its allocations per resource class."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement.db.models import allocations as alloc_t
from placement.db.models import inventories as inv_t
from placement.objects import resource_class


def for_provider(conn: Connection, rp_id: int) -> dict[str, int]:
    """{class name: used} for every class the provider has inventory of
    (0 when nothing is allocated), plus any class it has allocations of."""
    used = dict(conn.execute(
        sa.select(alloc_t.c.resource_class_id, sa.func.sum(alloc_t.c.used))
        .where(alloc_t.c.resource_provider_id == rp_id)
        .group_by(alloc_t.c.resource_class_id)).all())
    for rc_id in conn.execute(sa.select(inv_t.c.resource_class_id)
                              .where(inv_t.c.resource_provider_id == rp_id)).scalars():
        used.setdefault(rc_id, 0)
    names = resource_class.names_by_id(conn, used)
    return {names[rc_id]: int(amount) for rc_id, amount in used.items()}
