"""Reads without a transaction: each statement its own, as PostgreSQL runs it at READ COMMITTED anyway.

    with reads.connect(engine) as conn:
        rows = conn.execute(query).all()

psycopg2 begins a transaction before a connection's first statement (a
BEGIN round trip) and the pool rolls it back when the connection is returned
(a ROLLBACK round trip). For reads at READ COMMITTED the transaction adds
nothing (each statement takes its own snapshot), so ``autocommit`` leaves it
out: two round trips fewer per connection. Placement's handlers, the
compute API's server lists and a create's flavor read this way.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from sqlalchemy.engine import Connection, Engine


@contextlib.contextmanager
def connect(engine: Engine) -> Iterator[Connection]:
    """A pooled connection whose statements each run in their own transaction (``autocommit``)."""
    with engine.connect() as conn, autocommit(conn):
        yield conn


@contextlib.contextmanager
def autocommit(conn: Connection) -> Iterator[Connection]:
    """Every statement on ``conn`` is its own transaction (PostgreSQL).

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
