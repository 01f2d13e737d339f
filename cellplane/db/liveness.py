"""Replacing dead pooled connections without a round trip on every checkout.

SQLAlchemy's ``pool_pre_ping`` pings the server each time a connection
leaves the pool: one extra round trip per transaction, measured at 20-35 %
of a Placement claim. A connection that was in use a moment ago is alive
with near certainty; the ones worth checking are those that sat idle, when
the server may have restarted or a firewall dropped the session. So the
ping happens only after ``idle_seconds`` of idleness; a failed ping raises
``DisconnectionError``, on which the pool discards the connection and
checks out a fresh one.

A connection used a moment ago may still have died since: an operator's
``pg_terminate_backend``, a server shut down or restarted, a proxy that
closed. PostgreSQL tells the client then (a FATAL message, or the socket's
end), and a connection at rest in the pool is sent nothing else, so one
whose socket has something to read is not handed out either. That costs a
``poll`` of the socket (microseconds, no round trip). A connection whose
server vanished without a word (a cut cable) is found by the ping after
idleness, or by the statement that fails on it.
"""
from __future__ import annotations

import select
import time

from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

DEFAULT_IDLE_SECONDS = 5.0
_LAST_USED = 'cellplane_last_used'


def ping_after_idle(engine: Engine, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> None:
    """Ping a pooled connection on checkout when it has been idle that long."""

    @event.listens_for(engine, 'connect')
    def _fresh(dbapi_conn, record):
        record.info[_LAST_USED] = time.monotonic()

    @event.listens_for(engine, 'checkin')
    def _returned(dbapi_conn, record):
        if record is not None:
            record.info[_LAST_USED] = time.monotonic()

    @event.listens_for(engine, 'checkout')
    def _leaving(dbapi_conn, record, proxy):
        last_used = record.info.get(_LAST_USED)
        if last_used is not None and time.monotonic() - last_used < idle_seconds:
            if server_has_spoken(dbapi_conn):
                raise exc.DisconnectionError(
                    'the server closed this connection while it was in the pool')
            return
        try:
            cursor = dbapi_conn.cursor()
            try:
                cursor.execute('SELECT 1')
            finally:
                cursor.close()
            # The ping opened a transaction (DB-API drivers begin one
            # implicitly); hand the connection out idle, as the pool promises:
            # a caller that switches it to autocommit would otherwise fail.
            dbapi_conn.rollback()
        except Exception as error:  # any failure means: do not hand this one out
            raise exc.DisconnectionError(f'idle connection failed its ping: {error}') from error


def server_has_spoken(dbapi_conn) -> bool:
    """True when the server sent something to a connection at rest: its goodbye.

    A driver connection without a socket (SQLite) never has.
    """
    fileno = getattr(dbapi_conn, 'fileno', None)
    if fileno is None:
        return False
    try:
        fd = fileno()
    except Exception:  # noqa: BLE001 - any driver: closed already, so dead
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))
