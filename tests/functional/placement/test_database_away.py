"""Placement whose database went away answers 503 with Retry-After (never 500), and its clients wait it out.

Placement on a real PostgreSQL reached through a TCP proxy that is stopped
(its connections dropped, new ones refused) and started again: what a
PostgreSQL restart, or a network cut, looks like to Placement. Issue 27.
"""
from __future__ import annotations

import logging
import threading

import pytest
import webob
from sqlalchemy.engine import make_url

from cellplane.db import engines, migrate
from placement.client import InProcessTransport, PlacementClient
from placement.wsgi import make_app
from tests.support.tcp_proxy import TcpProxy


@pytest.fixture
def proxied(postgres_url):
    """(proxy, engine): a migrated Placement database, reached through ``proxy``."""
    real = make_url(postgres_url)
    proxy = TcpProxy(real.host or '127.0.0.1', real.port or 5432).start()
    url = real.set(host='127.0.0.1', port=proxy.port).render_as_string(hide_password=False)
    engine = engines.create_engine(url, pool_size=2, max_overflow=0, connect_timeout=2)
    migrate.sync('placement', engine)
    try:
        yield proxy, engine
    finally:
        engine.dispose()
        proxy.stop()


def _get(app, path: str) -> webob.Response:
    req = webob.Request.blank(path)
    req.headers['x-auth-token'] = 'admin'
    req.headers['openstack-api-version'] = 'placement 1.23'
    return req.get_response(app)


def test_a_dropped_and_then_refused_database_is_503_with_retry_after(proxied, caplog):
    proxy, engine = proxied
    app = make_app(engine, auth_strategy='noauth2')
    assert _get(app, '/resource_providers').status_int == 200
    caplog.set_level(logging.DEBUG)
    proxy.stop()
    # The first request meets its pooled connection dropped, the next ones a refusal.
    answers = [_get(app, '/resource_providers') for _ in range(3)]
    proxy.start()
    for resp in answers:
        assert resp.status_int == 503, resp.body
        assert resp.headers['Retry-After'] == '2'
        (error,) = resp.json['errors']
        assert (error['status'], error['title']) == (503, 'Service Unavailable')
        assert 'Placement cannot reach its database' in error['detail']
    assert _get(app, '/resource_providers').status_int == 200
    # One line for the outage (the engine's), none per request above DEBUG, no traceback.
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in loud] == ['cellplane.outage'], [r.getMessage() for r in loud]
    assert not any(r.exc_info for r in caplog.records)


def test_a_client_request_sent_while_the_database_is_away_is_answered_when_it_is_back(
        proxied):
    proxy, engine = proxied
    client = PlacementClient(InProcessTransport(make_app(engine, auth_strategy='noauth2'),
                                                attempts=20))
    client.ensure_provider('8b7c1f5a-2c55-4d1e-9d49-6f1f2c1d0a01', 'rp1')
    proxy.stop()
    back = threading.Timer(1.5, proxy.start)
    back.start()
    try:
        assert [p.name for p in client.list_providers()] == ['rp1']
    finally:
        back.join()
