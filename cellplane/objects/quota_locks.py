"""Per-project quota locks in the API DB (``quota_locks``): one project's creates check their quota in turn.

A create that counts a project's usage, compares it with the limit and
writes what it asked for must not interleave with another create of the
same project, or both could see room for themselves and together pass the
limit. ``hold`` locks the project's row for the rest of the caller's
transaction (an UPDATE: a row lock on PostgreSQL, the database's write lock
on SQLite), so a second create of the project waits at ``hold`` until the
first has committed what it wrote, then counts it. Creates of other
projects do not wait for each other on PostgreSQL.

There is nothing to release: the lock goes with the transaction, committed
or rolled back.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cellplane.db.api.models import quota_locks


def hold(conn: Connection, project_id: str) -> None:
    """Lock ``project_id``'s row until ``conn``'s transaction ends (creating the row the first time)."""
    bump = quota_locks.update().where(quota_locks.c.project_id == project_id).values(
        serial=quota_locks.c.serial + 1)
    if conn.execute(bump).rowcount:
        return
    try:
        with conn.begin_nested():
            conn.execute(quota_locks.insert().values(project_id=project_id, serial=1))
    except sa.exc.IntegrityError:
        # Another create inserted it first (and has committed: the insert
        # waited for it); lock the row it made.
        conn.execute(bump)
