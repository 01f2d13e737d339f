"""A database too busy to answer is a 503 with Retry-After, never a 500; clients retry it."""
from __future__ import annotations

import shutil
import threading

import sqlalchemy as sa
import webob

from placement.client import InProcessTransport, PlacementClient
from placement.wsgi import make_app
from tests.functional.placement.conftest import _migrated_template


def _one_connection_engine(tmp_path) -> sa.engine.Engine:
    path = tmp_path / 'placement.db'
    shutil.copy(_migrated_template(), path)
    return sa.create_engine(f'sqlite:///{path}', pool_size=1, max_overflow=0,
                            pool_timeout=0.2, connect_args={'check_same_thread': False})


def test_an_exhausted_pool_answers_503_with_retry_after_in_placements_format(tmp_path):
    engine = _one_connection_engine(tmp_path)
    app = make_app(engine, auth_strategy='noauth2', sync_standards=False)
    held = engine.connect()     # the pool's only connection
    try:
        req = webob.Request.blank('/resource_providers')
        req.headers['x-auth-token'] = 'admin'
        req.headers['openstack-api-version'] = 'placement 1.23'
        resp = req.get_response(app)
    finally:
        held.close()
        engine.dispose()
    assert resp.status_int == 503
    assert resp.headers['Retry-After'] == '1'
    (error,) = resp.json['errors']
    assert (error['status'], error['title']) == (503, 'Service Unavailable')
    assert 'no database connection was free in time' in error['detail']
    assert error['request_id'].startswith('req-')


def test_the_in_process_client_retries_a_503_until_placement_answers(tmp_path):
    engine = _one_connection_engine(tmp_path)
    client = PlacementClient(InProcessTransport(
        make_app(engine, auth_strategy='noauth2', sync_standards=False)))
    held = engine.connect()
    release = threading.Timer(0.5, held.close)
    release.start()
    try:
        # Answered once the connection is back, after a few 503s.
        assert client.list_providers() == []
    finally:
        release.join()
        engine.dispose()
