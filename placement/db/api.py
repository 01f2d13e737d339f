"""Transactions for handlers: ``reader`` for queries, ``writer`` for changes.

    with db_api.writer(req.context) as conn:
        resource_provider.bump_generation(conn, rp_id, expected_generation)
        conn.execute(...)

``writer`` is one transaction: it commits when the block ends and rolls
back on any exception (a 409 raised half-way undoes everything before it).
On SQLite it starts with BEGIN IMMEDIATE (see cellplane.db.engines), so
concurrent writers queue instead of failing.
"""
from __future__ import annotations

import contextlib
import datetime
from typing import Iterator

from sqlalchemy.engine import Connection


@contextlib.contextmanager
def reader(context) -> Iterator[Connection]:
    with context.engine.connect() as conn:
        yield conn
        # leaving connect() rolls back the implicit read transaction


@contextlib.contextmanager
def writer(context) -> Iterator[Connection]:
    with context.engine.begin() as conn:
        yield conn


def utcnow() -> datetime.datetime:
    """Now, as the naive UTC datetime the timestamp columns hold."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
