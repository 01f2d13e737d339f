"""Traits (standard from os-traits, and CUSTOM_*) and the traits of providers."""
from __future__ import annotations

import os_traits
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from placement import errors
from placement.db import api as db_api
from placement.db.models import resource_provider_traits as rpt_t
from placement.db.models import traits as trait_t

STANDARD_TRAITS: frozenset[str] = frozenset(os_traits.get_traits())


def is_custom(name: str) -> bool:
    return name.startswith(os_traits.CUSTOM_NAMESPACE)


def sync_standard(conn: Connection) -> None:
    """Insert the standard traits the database lacks (one query when none)."""
    present = set(conn.execute(sa.select(trait_t.c.name)
                               .where(~trait_t.c.name.startswith('CUSTOM_'))).scalars())
    now = db_api.utcnow()
    missing = [{'name': n, 'created_at': now, 'updated_at': now}
               for n in sorted(STANDARD_TRAITS - present)]
    if missing:
        conn.execute(trait_t.insert(), missing)


def ids_by_name(conn: Connection, names) -> dict[str, int]:
    """{name: id} for the ``names`` that exist."""
    names = list(names)
    if not names:
        return {}
    rows = conn.execute(sa.select(trait_t.c.name, trait_t.c.id)
                        .where(trait_t.c.name.in_(names)))
    return dict(rows.all())


def get(conn: Connection, name: str):
    row = conn.execute(sa.select(trait_t).where(trait_t.c.name == name)).first()
    if row is None:
        raise errors.NotFound(f'No such trait(s): {name}.')
    return row


def ensure(conn: Connection, name: str) -> tuple[bool, object]:
    """Create trait ``name`` if missing: (created, row)."""
    row = conn.execute(sa.select(trait_t).where(trait_t.c.name == name)).first()
    if row is not None:
        return False, row
    now = db_api.utcnow()
    try:
        with conn.begin_nested():
            conn.execute(trait_t.insert().values(name=name, created_at=now,
                                                 updated_at=now))
    except sa.exc.IntegrityError:
        pass   # created by a concurrent request: same result for the caller
    return True, conn.execute(sa.select(trait_t).where(trait_t.c.name == name)).first()


def delete(conn: Connection, name: str) -> None:
    if name in STANDARD_TRAITS:
        raise errors.BadRequest(f'Cannot delete standard trait {name}.')
    row = get(conn, name)
    used = conn.execute(sa.select(sa.literal(1)).select_from(rpt_t)
                        .where(rpt_t.c.trait_id == row.id).limit(1)).first()
    if used is not None:
        raise errors.Conflict(
            f'The trait {name} is in use by a resource provider.')
    conn.execute(trait_t.delete().where(trait_t.c.id == row.id))


def list_traits(conn: Connection, *, names=None, prefix: str | None = None,
                associated: bool | None = None):
    """Rows (name, created_at, updated_at) filtered as GET /traits does."""
    query = sa.select(trait_t.c.name, trait_t.c.created_at, trait_t.c.updated_at)
    if names is not None:
        query = query.where(trait_t.c.name.in_(list(names)))
    if prefix is not None:
        query = query.where(trait_t.c.name.startswith(prefix, autoescape=True))
    if associated is not None:
        linked = sa.select(rpt_t.c.trait_id)
        query = query.where(trait_t.c.id.in_(linked) if associated
                            else trait_t.c.id.not_in(linked))
    return conn.execute(query.order_by(trait_t.c.name)).all()


def for_provider(conn: Connection, rp_id: int):
    """Rows (name, created_at, updated_at) of provider ``rp_id``'s traits."""
    return conn.execute(
        sa.select(trait_t.c.name, trait_t.c.created_at, trait_t.c.updated_at)
        .join(rpt_t, rpt_t.c.trait_id == trait_t.c.id)
        .where(rpt_t.c.resource_provider_id == rp_id)
        .order_by(trait_t.c.name)).all()


def set_for_provider(conn: Connection, rp_id: int, names) -> None:
    """Make provider ``rp_id``'s traits exactly ``names`` (caller bumps generation)."""
    names = set(names)
    ids = ids_by_name(conn, names)
    missing = names - set(ids)
    if missing:
        raise errors.BadRequest(f'No such trait(s): {", ".join(sorted(missing))}')
    current = set(conn.execute(sa.select(rpt_t.c.trait_id)
                               .where(rpt_t.c.resource_provider_id == rp_id)).scalars())
    wanted = set(ids.values())
    gone = current - wanted
    if gone:
        conn.execute(rpt_t.delete().where(rpt_t.c.resource_provider_id == rp_id,
                                          rpt_t.c.trait_id.in_(gone)))
    new = wanted - current
    if new:
        now = db_api.utcnow()
        conn.execute(rpt_t.insert(), [
            {'trait_id': t, 'resource_provider_id': rp_id,
             'created_at': now, 'updated_at': now} for t in sorted(new)])
