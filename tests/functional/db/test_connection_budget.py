"""The connection budget on a real PostgreSQL: pools sized by their options, named when exhausted."""
from __future__ import annotations

import uuid

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


def test_a_cell_engine_keeps_pool_size_idle_and_names_its_options_when_exhausted(
        conf, named, postgres_url):
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
        # The overflow is closed when given back (PostgreSQL lists a closed
        # connection's backend until that process has exited: a moment).
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
