"""A pooled PostgreSQL connection killed while idle is replaced, not handed out dead."""
from __future__ import annotations

import psycopg2.extensions
import sqlalchemy as sa

from cellplane.db import engines, liveness
from tests.support.polling import eventually


def _backend_pid(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text('SELECT pg_backend_pid()')).scalar_one()


def _terminate(admin_url: str, pid: int) -> None:
    """Kill backend ``pid``, and wait until it is gone (pg_terminate_backend only signals it)."""
    admin = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT', poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        assert conn.execute(sa.text('SELECT pg_terminate_backend(:p)'), {'p': pid}).scalar_one()
        eventually(lambda: not conn.execute(
            sa.text('SELECT count(*) FROM pg_stat_activity WHERE pid = :p'), {'p': pid}
        ).scalar_one(), f'backend {pid} gone', seconds=10)
    admin.dispose()


def test_connection_killed_while_idle_is_replaced_on_next_checkout(postgres_url):
    engine = sa.create_engine(postgres_url, pool_size=1, max_overflow=0)
    liveness.ping_after_idle(engine, idle_seconds=0)
    first = _backend_pid(engine)
    _terminate(postgres_url, first)

    second = _backend_pid(engine)
    assert second != first
    engine.dispose()


class _RecordingCursor(psycopg2.extensions.cursor):
    """A driver cursor that notes each statement it sends (on its connection's list)."""

    def execute(self, query, vars=None):
        self.connection.sent.append(query if isinstance(query, str) else query.decode())
        return super().execute(query, vars)


class _RecordingConnection(psycopg2.extensions.connection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent = []
        self.cursor_factory = _RecordingCursor


def _recording_engine(postgres_url, idle_seconds):
    engine = sa.create_engine(postgres_url, pool_size=1, max_overflow=0,
                              connect_args={'connection_factory': _RecordingConnection})
    liveness.ping_after_idle(engine, idle_seconds=idle_seconds)
    return engine


def test_within_the_idle_window_a_killed_connection_is_replaced_without_a_ping(postgres_url):
    # PostgreSQL says goodbye on the socket of a terminated backend: the
    # checkout sees it there, without a round trip.
    engine = _recording_engine(postgres_url, idle_seconds=3600)
    first = _backend_pid(engine)
    _terminate(postgres_url, first)
    with engine.connect() as conn:
        second = conn.execute(sa.text('SELECT pg_backend_pid()')).scalar_one()
        sent = conn.connection.dbapi_connection.sent
    assert second != first
    assert 'SELECT 1' not in sent
    engine.dispose()


def test_within_the_idle_window_a_live_connection_is_handed_out_as_it_is(postgres_url):
    # The control case: the check above neither pings nor replaces a live
    # connection (the pool would otherwise reconnect on every checkout).
    engine = _recording_engine(postgres_url, idle_seconds=3600)
    first = _backend_pid(engine)
    with engine.connect() as conn:
        second = conn.execute(sa.text('SELECT pg_backend_pid()')).scalar_one()
        sent = conn.connection.dbapi_connection.sent
    assert second == first
    assert 'SELECT 1' not in sent
    engine.dispose()


def test_after_the_idle_window_a_connection_is_pinged(postgres_url):
    engine = _recording_engine(postgres_url, idle_seconds=0)
    _backend_pid(engine)
    with engine.connect() as conn:
        sent = conn.connection.dbapi_connection.sent
        assert 'SELECT 1' in sent
    engine.dispose()


def test_bare_postgresql_url_uses_psycopg2(postgres_url):
    bare = postgres_url.replace('postgresql+psycopg2://', 'postgresql://')
    engine = engines.create_engine(bare)
    assert engine.dialect.driver == 'psycopg2'
    with engine.connect() as conn:
        assert conn.execute(sa.text('SELECT 1')).scalar_one() == 1
    engine.dispose()


def test_a_pinged_connection_is_handed_out_outside_any_transaction(postgres_url):
    # The claim path switches the driver connection to autocommit, which
    # psycopg2 refuses inside a transaction: the ping must not leave one open.
    from psycopg2 import extensions
    engine = sa.create_engine(postgres_url, pool_size=1, max_overflow=0)
    liveness.ping_after_idle(engine, idle_seconds=0)
    _backend_pid(engine)
    with engine.connect() as conn:
        dbapi_conn = conn.connection.dbapi_connection
        assert dbapi_conn.info.transaction_status == extensions.TRANSACTION_STATUS_IDLE
        dbapi_conn.autocommit = True
        dbapi_conn.autocommit = False
    engine.dispose()


def test_postgresql_sessions_run_without_jit(postgres_url):
    # JIT compilation cost 15 ms on a 4 ms candidates query; every session
    # of a cellplane engine turns it off, and keeps it off after a rollback.
    engine = engines.create_engine(postgres_url, pool_size=1, max_overflow=0)
    with engine.connect() as conn:
        assert conn.execute(sa.text('SHOW jit')).scalar_one() == 'off'
        conn.rollback()
        assert conn.execute(sa.text('SHOW jit')).scalar_one() == 'off'
    engine.dispose()
