"""The planner settings of the PostgreSQL sessions a Placement worker opens
(placement.db.api.tune_sessions), checked on the engine that
``app_from_conf`` builds, as the daemon's workers do."""
from __future__ import annotations

import pytest
import sqlalchemy as sa
from oslo_config import cfg

from cellplane import config
from cellplane.db import engines, migrate
from placement import conf as placement_conf
from placement.wsgi import app_from_conf


def _setting(engine, name: str) -> str:
    with engine.connect() as conn:
        return conn.execute(sa.text(f'SHOW {name}')).scalar_one()


def test_placement_sessions_run_without_memoize(tmp_path, postgres_url):
    engine = engines.create_engine(postgres_url, pool_size=1, max_overflow=0)
    migrate.sync('placement', engine)
    if engine.dialect.server_version_info < (14,):
        engine.dispose()
        pytest.skip('PostgreSQL before 14 has no Memoize to turn off')
    # Placement's own setting, not the server's default or every engine's.
    assert _setting(engine, 'enable_memoize') == 'on'
    engine.dispose()
    path = tmp_path / 'placement.conf'
    path.write_text(f'[placement_database]\nconnection = {postgres_url}\n'
                    '[api]\nauth_strategy = noauth2\n')
    conf = config.load(['--config-file', str(path)], prog='cellplane-placement',
                       conf=cfg.ConfigOpts(), registrars=[placement_conf.register_opts],
                       setup_logging=False)
    app = app_from_conf(conf, sync_standards=False)
    try:
        assert _setting(app.engine, 'enable_memoize') == 'off'
        # kept after a rollback: the SET was committed on its own
        with app.engine.connect() as conn:
            conn.rollback()
            assert conn.execute(sa.text('SHOW enable_memoize')).scalar_one() == 'off'
    finally:
        app.engine.dispose()
