"""The ``client`` fixture: the real Placement WSGI app, in-process, on a fresh
SQLite database per test (the migrated schema is built once per session and
copied), driven with WebOb requests. No socket, no daemon.

    def test_something(client):
        resp = client.post('/resource_providers', {'name': 'cn1'})
        assert resp.status_int == 200
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile

import pytest
import webob

from cellplane.db import engines, migrate

# The ``api`` fixture (SQLite and PostgreSQL) and the PostgreSQL engine it uses.
from tests.functional.placement.inprocess import _postgres_engine, api  # noqa: F401

LATEST = 'latest'


class Client:
    """Requests against one app; every call returns the webob.Response."""

    def __init__(self, app, engine):
        self.app = app
        self.engine = engine

    def request(self, method: str, path: str, body=None, *, mv: str | None = LATEST,
                token: str | None = 'admin', headers: dict | None = None,
                raw: bytes | str | None = None,
                content_type: str | None = None) -> webob.Response:
        req = webob.Request.blank(path, method=method)
        if token is not None:
            req.headers['X-Auth-Token'] = token
        req.headers['Accept'] = 'application/json'
        if mv is not None:
            req.headers['OpenStack-API-Version'] = f'placement {mv}'
        if body is not None:
            raw = json.dumps(body)
            content_type = content_type or 'application/json'
        if raw is not None:
            req.body = raw.encode() if isinstance(raw, str) else raw
            if content_type is not None:
                req.content_type = content_type
        for key, value in (headers or {}).items():
            if value is None:
                req.headers.pop(key, None)
            else:
                req.headers[key] = value
        return req.get_response(self.app)

    def get(self, path, **kw):
        return self.request('GET', path, **kw)

    def post(self, path, body=None, **kw):
        return self.request('POST', path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request('PUT', path, body, **kw)

    def delete(self, path, **kw):
        return self.request('DELETE', path, **kw)

    # ------------------------------------------------------------- set-up
    def provider(self, name: str, uuid: str | None = None, **extra) -> dict:
        """Create a provider (at latest); its JSON."""
        body = {'name': name, **extra}
        if uuid:
            body['uuid'] = uuid
        resp = self.post('/resource_providers', body)
        assert resp.status_int == 200, resp.text
        return resp.json


def error(resp: webob.Response) -> dict:
    """The single error of an error response body."""
    body = resp.json
    assert len(body['errors']) == 1, body
    return body['errors'][0]


_template: list[str] = []


def _migrated_template() -> str:
    if not _template:
        path = os.path.join(tempfile.mkdtemp(prefix='placement-core-'), 'placement.db')
        engine = engines.create_engine(f'sqlite:///{path}')
        migrate.sync('placement', engine)
        from placement.objects import standards
        standards.sync(engine)
        engine.dispose()
        _template.append(path)
    return _template[0]


@pytest.fixture
def engine(tmp_path):
    path = tmp_path / 'placement.db'
    shutil.copy(_migrated_template(), path)
    eng = engines.create_engine(f'sqlite:///{path}')
    yield eng
    eng.dispose()


def placement_conf(**groups: dict):
    """Placement's options at their defaults but for ``groups``, e.g.
    ``placement_conf(api={'auth_strategy': 'noauth2'}, oslo_policy={'enforce_new_defaults': False})``."""
    from placement import conf as placement_conf_mod
    conf = placement_conf_mod.defaults()
    for group, values in groups.items():
        for name, value in values.items():
            conf.set_override(name, value, group=group)
    return conf


@pytest.fixture
def make_client(engine):
    """make_client(conf=placement_conf(...)) -> Client on the test's DB (noauth2 unless conf says otherwise)."""
    from placement.wsgi import make_app

    def make(**settings) -> Client:
        if 'conf' not in settings:
            settings.setdefault('auth_strategy', 'noauth2')
        return Client(make_app(engine, **settings), engine)
    return make


@pytest.fixture
def client(make_client):
    return make_client()
