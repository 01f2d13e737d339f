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

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine


@contextlib.contextmanager
def reader(context) -> Iterator[Connection]:
    with context.engine.connect() as conn, autocommit(conn):
        yield conn


@contextlib.contextmanager
def autocommit(conn: Connection) -> Iterator[Connection]:
    """Every statement on ``conn`` is its own transaction (PostgreSQL).

    For reads at READ COMMITTED a transaction adds nothing (each statement
    takes its own snapshot anyway) but two round trips, BEGIN and ROLLBACK.
    psycopg2's autocommit flag is set on the client side only, then cleared
    before the connection goes back to the pool. SQLAlchemy's AUTOCOMMIT
    isolation level would cost a round trip of its own (it sends SET
    default_transaction_isolation when the connection is returned). On
    other databases the block runs as it would without this.
    """
    if conn.dialect.name != 'postgresql':
        yield conn
        return
    conn.commit()   # nothing of the caller's may stay pending
    dbapi_conn = conn.connection.dbapi_connection
    dbapi_conn.autocommit = True
    try:
        yield conn
    finally:
        if not conn.invalidated:
            dbapi_conn.autocommit = False


@contextlib.contextmanager
def writer(context) -> Iterator[Connection]:
    with context.engine.begin() as conn:
        yield conn


def utcnow() -> datetime.datetime:
    """Now, as the naive UTC datetime the timestamp columns hold."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def tune_sessions(engine: Engine) -> None:
    """Planner settings for every new PostgreSQL session of ``engine``.

    ``enable_memoize = off`` (PostgreSQL 14 and later): Placement's hot
    queries walk providers one by one and look each one up once, so the
    result caches the planner puts over those lookups (Memoize) never hit
    and only cost: measured on the candidates query over 5,000 providers,
    16.2 -> 14.2 ms with it off. Set when a connection is opened, so no
    request pays a round trip for it.
    """
    if engine.dialect.name == 'postgresql':
        event.listen(engine, 'connect', _no_memoize)


def _no_memoize(dbapi_conn, _record) -> None:
    if getattr(dbapi_conn, 'server_version', 0) < 140000:
        return   # no Memoize before PostgreSQL 14
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute('SET enable_memoize = off')
    finally:
        cursor.close()
    dbapi_conn.commit()   # a SET inside a rolled-back transaction is undone
