"""Aggregates a provider is a member of (aggregates are just UUIDs)."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement.db import api as db_api
from placement.db.models import placement_aggregates as agg_t
from placement.db.models import resource_provider_aggregates as rpa_t


def for_provider(conn: Connection, rp_id: int):
    """Rows (uuid, created_at, updated_at) of the provider's aggregates."""
    return conn.execute(
        sa.select(agg_t.c.uuid, rpa_t.c.created_at, rpa_t.c.updated_at)
        .join(rpa_t, rpa_t.c.aggregate_id == agg_t.c.id)
        .where(rpa_t.c.resource_provider_id == rp_id)
        .order_by(agg_t.c.id)).all()


def _ensure_ids(conn: Connection, uuids: list[str]) -> dict[str, int]:
    """{uuid: id}, creating the aggregates not yet known."""
    if not uuids:
        return {}
    found = dict(conn.execute(sa.select(agg_t.c.uuid, agg_t.c.id)
                              .where(agg_t.c.uuid.in_(uuids))).all())
    now = db_api.utcnow()
    for uuid in uuids:
        if uuid not in found:
            try:
                with conn.begin_nested():
                    found[uuid] = conn.execute(agg_t.insert().values(
                        uuid=uuid, created_at=now, updated_at=now)
                    ).inserted_primary_key[0]
            except sa.exc.IntegrityError:   # created concurrently
                found[uuid] = conn.execute(sa.select(agg_t.c.id)
                                           .where(agg_t.c.uuid == uuid)).scalar_one()
    return found


def set_for_provider(conn: Connection, rp_id: int, uuids: list[str]) -> None:
    """Make the provider's aggregates exactly ``uuids`` (caller bumps generation)."""
    wanted = _ensure_ids(conn, uuids)
    current = set(conn.execute(sa.select(rpa_t.c.aggregate_id)
                               .where(rpa_t.c.resource_provider_id == rp_id)).scalars())
    gone = current - set(wanted.values())
    if gone:
        conn.execute(rpa_t.delete().where(rpa_t.c.resource_provider_id == rp_id,
                                          rpa_t.c.aggregate_id.in_(gone)))
    new = [agg_id for agg_id in wanted.values() if agg_id not in current]
    if new:
        now = db_api.utcnow()
        conn.execute(rpa_t.insert(), [
            {'resource_provider_id': rp_id, 'aggregate_id': a,
             'created_at': now, 'updated_at': now} for a in new])
