"""The failure-domain levels in the API DB (``failure_domain_levels``): their names, smallest first.

The levels are those a scheduler recorded when it started (``[scheduler]
failure_domain_levels``) or the operator with ``cellplane-manage
failure-domain record-levels``, so that the CLI and every scheduler agree
on them. ``host`` is below them all and never recorded. Recording levels
that the existing domains must fit is ``failure_domains.record_levels``,
which writes them here.
"""
from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import failure_domain_levels


def read(conn: Connection, *, lock: bool = False) -> list[str]:
    """The recorded levels, smallest first; ``lock``: their rows ``FOR UPDATE`` (a writer's first step)."""
    query = sa.select(failure_domain_levels.c.name).order_by(failure_domain_levels.c.position)
    if lock:
        query = query.with_for_update()
    return list(conn.execute(query).scalars())


def levels(engine: Engine) -> list[str]:
    """The recorded levels, smallest first (empty until a scheduler or the operator records them)."""
    with engine.connect() as conn:
        return read(conn)


def replace(conn: Connection, names: Sequence[str]) -> None:
    """Record ``names`` as the levels, smallest first, in the caller's transaction."""
    conn.execute(failure_domain_levels.delete())
    if names:
        conn.execute(failure_domain_levels.insert(),
                     [{'name': n, 'position': i} for i, n in enumerate(names)])
