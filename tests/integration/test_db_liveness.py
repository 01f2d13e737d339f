"""A pooled PostgreSQL connection killed while idle is replaced, not handed out dead."""
from __future__ import annotations

import sqlalchemy as sa

from cellplane.db import engines, liveness


def _backend_pid(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text('SELECT pg_backend_pid()')).scalar_one()


def _terminate(admin_url: str, pid: int) -> None:
    admin = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT', poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        assert conn.execute(sa.text('SELECT pg_terminate_backend(:p)'), {'p': pid}).scalar_one()
    admin.dispose()


def test_connection_killed_while_idle_is_replaced_on_next_checkout(postgres_url):
    engine = sa.create_engine(postgres_url, pool_size=1, max_overflow=0)
    liveness.ping_after_idle(engine, idle_seconds=0)
    first = _backend_pid(engine)
    _terminate(postgres_url, first)

    second = _backend_pid(engine)
    assert second != first
    engine.dispose()


def test_within_the_idle_window_a_killed_connection_is_not_pinged(postgres_url):
    # The control case: shows the test above exercises the ping, not luck,
    # and that a recently used connection costs no ping.
    engine = sa.create_engine(postgres_url, pool_size=1, max_overflow=0)
    liveness.ping_after_idle(engine, idle_seconds=3600)
    first = _backend_pid(engine)
    _terminate(postgres_url, first)
    try:
        _backend_pid(engine)
        raised = False
    except sa.exc.OperationalError:
        raised = True
    assert raised
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
