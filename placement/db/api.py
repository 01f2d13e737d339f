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
import weakref
from typing import Iterator

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

# Reads without a transaction (two round trips fewer), shared with the compute API.
from cellplane.db.reads import autocommit


@contextlib.contextmanager
def reader(context) -> Iterator[Connection]:
    with context.engine.connect() as conn, autocommit(conn):
        yield conn


def execute_in_autocommit(conn: Connection, sql: str, params) -> list[tuple]:
    """Run one statement (driver SQL) as its own transaction on ``conn``'s
    driver connection (see ``autocommit``); return its rows (none for a
    statement without a result). Driver errors come out as SQLAlchemy's."""
    with autocommit(conn):
        dbapi_conn = conn.connection.dbapi_connection
        try:
            with dbapi_conn.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if cursor.description else []
        except dbapi_conn.Error as orig:
            if conn.dialect.is_disconnect(orig, dbapi_conn, None):
                conn.invalidate(orig)
            raise sa_exc.DBAPIError.instance(
                sql, params, orig, conn.dialect.loaded_dbapi.Error,
                dialect=conn.dialect) from None


@contextlib.contextmanager
def writer(context) -> Iterator[Connection]:
    with context.engine.begin() as conn:
        yield conn


def utcnow() -> datetime.datetime:
    """Now, as the naive UTC datetime the timestamp columns hold."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


_DATABASE_KEYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def database_key(engine: Engine) -> str:
    """``engine``'s URL (password hidden), the key of per-database caches.

    Rendered once per engine: rendering a URL quotes each of its parts, and
    a claim looked four caches up with it (a twentieth of the Python work
    of a claim).
    """
    key = _DATABASE_KEYS.get(engine)
    if key is None:
        key = _DATABASE_KEYS[engine] = str(engine.url)
    return key
