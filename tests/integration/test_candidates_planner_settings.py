"""The planner settings of the candidates walk on PostgreSQL hold for that
one statement only: the pooled connection goes back as it came."""
from __future__ import annotations

import sqlalchemy as sa

from cellplane.db import engines, migrate
from placement.client import InProcessTransport
from placement.wsgi import make_app

SETTINGS = ('enable_bitmapscan', 'enable_memoize')


def _settings(engine) -> dict:
    with engine.connect() as conn:
        return {name: conn.execute(sa.text(f'SHOW {name}')).scalar_one()
                for name in SETTINGS}


def test_walk_settings_end_with_the_statement(postgres_url):
    # One pooled connection: the candidates request and the check share it.
    engine = engines.create_engine(postgres_url, pool_size=1, max_overflow=0)
    migrate.sync('placement', engine)
    transport = InProcessTransport(make_app(engine, auth_strategy='noauth2'))
    try:
        before = _settings(engine)
        assert before == {'enable_bitmapscan': 'on', 'enable_memoize': 'on'}
        rp = 'f2a8c8a4-5d7e-4f0e-9a51-3c1f0b7d6e21'
        assert transport.request('POST', '/resource_providers',
                                 {'name': 'cn1', 'uuid': rp}).status == 200
        assert transport.request('PUT', f'/resource_providers/{rp}/inventories', {
            'resource_provider_generation': 0,
            'inventories': {'VCPU': {'total': 8}}}).status == 200
        resp = transport.request('GET', '/allocation_candidates?resources=VCPU:1')
        assert resp.status == 200
        assert list(resp.body['provider_summaries']) == [rp]
        assert _settings(engine) == before
    finally:
        engine.dispose()
