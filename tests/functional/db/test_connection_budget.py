"""The connection budget on a real PostgreSQL: pools sized by their options, named when exhausted."""
from __future__ import annotations

import os
import threading
import time
import uuid
import weakref

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from cellplane import conf as cellplane_conf
from cellplane.db import engines, pools
from tests.support.polling import eventually


@pytest.fixture
def conf(tmp_path):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[cell_databases]\npool_size = 1\nmax_overflow = 2\npool_timeout = 0.3\n')
    conf = cfg.ConfigOpts()
    cellplane_conf.register_opts(conf)
    conf([], default_config_files=[str(path)])
    return conf


@pytest.fixture
def named():
    before = engines.process_name()
    name = f'budget-{uuid.uuid4().hex[:8]}'
    engines.name_process(name)
    yield name
    engines.name_process(before)


def held_by(url: str, name: str) -> int:
    admin = sa.create_engine(url.replace('postgresql://', 'postgresql+psycopg2://'),
                             poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            return conn.execute(sa.text(
                'SELECT count(*) FROM pg_stat_activity WHERE application_name = :n'),
                {'n': name}).scalar()
    finally:
        admin.dispose()


@pytest.fixture
def room_to_linger(monkeypatch):
    """Other tests' pools in this process keep no idle overflow from these tests'."""
    monkeypatch.setattr(engines, 'IDLE_OVERFLOW_PER_PROCESS', 1000)
    monkeypatch.setattr(engines, '_idle_overflow_bound', None)


def test_a_cell_engine_keeps_pool_size_idle_and_names_its_options_when_exhausted(
        conf, named, postgres_url, room_to_linger):
    engine = pools.cell_engine_factory(conf)(postgres_url)
    try:
        held = [engine.connect() for _ in range(3)]        # pool_size 1 + max_overflow 2
        assert held_by(postgres_url, named) == 3
        with pytest.raises(engines.PoolExhausted) as exhausted:
            engine.connect()
        message = str(exhausted.value)
        assert '\n' not in message
        assert 'all 3 connections this process may hold to database' in message
        assert '[cell_databases] pool_size, max_overflow (in ' in message
        assert 'scheduler.conf' in message
        for conn in held:
            conn.close()
        # The overflow stays open while it may serve the rest of a burst...
        assert engine.pool.checkedin() == 3
        assert engine.pool.reap_idle(time.monotonic()) == 0
        # ...and is closed once idle, down to pool_size (PostgreSQL lists a
        # closed connection's backend until that process has exited: a moment).
        later = time.monotonic() + engines.OVERFLOW_IDLE_SECONDS
        assert engine.pool.reap_idle(later) == 2
        assert engine.pool.checkedin() == 1
        eventually(lambda: held_by(postgres_url, named) == 1, 'the overflow closed')
        engine.dispose()                                  # a new pool (SIGHUP, a moved cell)...
        held = [engine.connect() for _ in range(3)]
        with pytest.raises(engines.PoolExhausted, match=r'\[cell_databases\] pool_size'):
            engine.connect()                              # ...still names its options
        for conn in held:
            conn.close()
    finally:
        engine.dispose()
    eventually(lambda: held_by(postgres_url, named) == 0, 'every connection closed')


def test_a_burst_reuses_the_connections_it_opened_and_the_reaper_closes_them_once_idle(
        conf, named, postgres_url, room_to_linger):
    engine = pools.cell_engine_factory(conf)(postgres_url)
    opened = []
    sa.event.listen(engine, 'connect', lambda dbapi_conn, record: opened.append(1))
    engine.pool.idle_seconds = 0.2
    try:
        for _ in range(5):                                # five bursts of three at once
            held = [engine.connect() for _ in range(3)]
            for conn in held:
                conn.exec_driver_sql('SELECT 1')
                conn.close()
        # Before, each burst opened its two overflow connections again (9 more).
        assert len(opened) == 3
        # Last returned, first handed out: one thread at a time uses one connection.
        for _ in range(10):
            with engine.connect() as conn:
                conn.exec_driver_sql('SELECT 1')
        assert len(opened) == 3
        # The process's reaper thread closes the idle overflow: pool_size is left.
        assert any(t.name == 'db-idle-reaper' for t in threading.enumerate())
        eventually(lambda: engine.pool.checkedin() == 1, 'the idle overflow closed',
                   seconds=3 * engines.OVERFLOW_IDLE_SECONDS)
        eventually(lambda: held_by(postgres_url, named) == 1, 'its backends gone')
        # Wanted again, the overflow is opened again, up to the same bound.
        held = [engine.connect() for _ in range(3)]
        with pytest.raises(engines.PoolExhausted):
            engine.connect()
        assert len(opened) == 5
        for conn in held:
            conn.close()
    finally:
        engine.dispose()


def test_a_thread_waits_for_a_connection_given_back_before_it_opens_one_beyond_pool_size(
        conf, named, postgres_url, room_to_linger):
    engine = pools.cell_engine_factory(conf)(postgres_url)   # pool_size 1, max_overflow 2
    opened = []
    sa.event.listen(engine, 'connect', lambda dbapi_conn, record: opened.append(1))
    try:
        # Given back within the grace: taken, no backend opened.
        engine.pool.overflow_grace = 30.0
        first = engine.connect()
        first.exec_driver_sql('SELECT 1')
        giver = threading.Timer(0.2, first.close)
        giver.start()
        with engine.connect() as second:
            second.exec_driver_sql('SELECT 1')
        giver.join()
        assert len(opened) == 1
        # None given back within the grace: one opened beyond pool_size, as before.
        engine.pool.overflow_grace = 0.1
        with engine.connect() as held, engine.connect() as beyond:
            held.exec_driver_sql('SELECT 1')
            beyond.exec_driver_sql('SELECT 1')
        assert len(opened) == 2
        # The pool a dispose makes waits as its predecessor did.
        engine.pool.overflow_grace = 30.0
        engine.dispose()
        assert engine.pool.overflow_grace == 30.0
    finally:
        engine.dispose()


def test_below_pool_size_and_at_the_cap_nothing_waits_the_grace(named, postgres_url,
                                                                 room_to_linger):
    engine = engines.create_engine(postgres_url, pool_size=2, max_overflow=1,
                                   pool_timeout=0.2)
    engine.pool.overflow_grace = 30.0
    try:
        asked = time.monotonic()
        with engine.connect() as first, engine.connect() as second:   # both within pool_size
            first.exec_driver_sql('SELECT 1')
            second.exec_driver_sql('SELECT 1')
        assert time.monotonic() - asked < 10, 'a connection within pool_size waited the grace'
        engine.pool.overflow_grace = 0.05
        held = [engine.connect() for _ in range(3)]                  # the cap: 2 + 1
        engine.pool.overflow_grace = 30.0
        asked = time.monotonic()
        with pytest.raises(engines.PoolExhausted):
            engine.connect()                                         # pool_timeout only
        assert time.monotonic() - asked < 10, 'a pool at its cap waited the grace as well'
        for conn in held:
            conn.close()
    finally:
        engine.dispose()


def test_a_process_keeps_a_bounded_number_idle_beyond_its_pools_sizes(
        conf, named, postgres_url, monkeypatch):
    monkeypatch.setattr(engines, 'IDLE_OVERFLOW_PER_PROCESS', 1)
    first = pools.cell_engine_factory(conf)(postgres_url)
    second = pools.cell_engine_factory(conf)(postgres_url)
    others = engines._IdleReaper.idle_overflow()
    try:
        held = [first.connect() for _ in range(3)] + [second.connect() for _ in range(3)]
        for conn in held:
            conn.close()
        # Each pool keeps its pool_size; beyond it, what the process already
        # keeps idle decides: the first overflow back lingers, the rest close.
        assert first.pool.checkedin() + second.pool.checkedin() == 1 + 1 + max(0, 1 - others)
        eventually(lambda: held_by(postgres_url, named) == 2 + max(0, 1 - others),
                   'the overflow beyond the process\'s bound closed')
    finally:
        first.dispose()
        second.dispose()


def test_a_role_may_keep_more_idle_beyond_its_pools_sizes(conf, named, postgres_url, monkeypatch):
    """What the super conductor sets (``keep_idle_overflow``): its overflow lingers, up to the bound."""
    monkeypatch.setattr(engines, 'IDLE_OVERFLOW_PER_PROCESS', 1)
    monkeypatch.setattr(engines, '_idle_overflow_bound', None)
    # Only this test's pools count: other tests' idle connections cannot move the bound.
    monkeypatch.setattr(engines._IdleReaper, '_pools', weakref.WeakSet())
    engines.keep_idle_overflow(3)
    assert engines.idle_overflow_bound() == 3
    with pytest.raises(ValueError):
        engines.keep_idle_overflow(-1)
    first = pools.cell_engine_factory(conf)(postgres_url)
    second = pools.cell_engine_factory(conf)(postgres_url)
    try:
        held = [first.connect() for _ in range(3)] + [second.connect() for _ in range(3)]
        for conn in held:
            conn.close()
        # pool_size 1 each, then three of the four overflow connections kept idle.
        assert first.pool.checkedin() + second.pool.checkedin() == 1 + 1 + 3
        eventually(lambda: held_by(postgres_url, named) == 5,
                   'the one overflow beyond the bound closed')
    finally:
        first.dispose()
        second.dispose()


def test_a_forked_child_neither_reaps_nor_counts_its_parents_pools(conf, postgres_url):
    engine = pools.cell_engine_factory(conf)(postgres_url)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql('SELECT 1')
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child: the parent's pools are not its own
            state = (engine.pool in engines._IdleReaper._pools,
                     engines._IdleReaper._thread is None)
            os.write(write, repr(state).encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        assert os.read(read, 100).decode() == repr((False, True))
        os.close(read)
        assert engine.pool in engines._IdleReaper._pools   # the parent's own, still
    finally:
        engine.dispose()
