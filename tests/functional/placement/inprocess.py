"""An in-process Placement for the allocation, candidate and usage tests.

``api`` (a pytest fixture: import it into the test module) is the real WSGI
app of placement.wsgi.make_app on a fresh SQLite database, driven with
WebOb requests: the same handlers and SQL as the daemon, without a socket.
The migrated schema is built once per session and copied per test.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import uuid as uuidlib
from dataclasses import dataclass

import pytest
import webob

from cellplane.db import engines, migrate

LATEST = '1.39'


@dataclass
class Result:
    status: int
    headers: dict
    text: str

    @property
    def json(self):
        return json.loads(self.text)

    @property
    def error(self) -> dict:
        return self.json['errors'][0]


class Api:
    def __init__(self, app, engine):
        self.app = app
        self.engine = engine

    def request(self, method: str, path: str, body=None, *, mv: str | None = LATEST,
                raw: bytes | None = None, content_type: str | None = None) -> Result:
        req = webob.Request.blank(path, method=method)
        req.headers['x-auth-token'] = 'admin'
        # A deployment's service user: /reshaper is the service role's alone.
        req.headers['x-roles'] = 'admin,service'
        req.headers['accept'] = 'application/json'
        if mv:
            req.headers['openstack-api-version'] = f'placement {mv}'
        if body is not None:
            raw = json.dumps(body).encode()
            content_type = content_type or 'application/json'
        if raw is not None:
            req.body = raw
            req.content_type = content_type or 'application/json'
        resp = req.get_response(self.app)
        return Result(resp.status_int, dict(resp.headers), resp.body.decode())

    def get(self, path, **kw):
        return self.request('GET', path, **kw)

    def put(self, path, body=None, **kw):
        return self.request('PUT', path, body, **kw)

    def post(self, path, body=None, **kw):
        return self.request('POST', path, body, **kw)

    def delete(self, path, **kw):
        return self.request('DELETE', path, **kw)

    # ------------------------------------------------------------ set-up
    def provider(self, name: str, *, inventory: dict | None = None, traits=(),
                 aggregates=(), parent: str | None = None, uuid: str | None = None) -> str:
        """Create a provider with inventory/traits/aggregates; its uuid."""
        uuid = uuid or str(uuidlib.uuid4())
        body = {'name': name, 'uuid': uuid}
        if parent:
            body['parent_provider_uuid'] = parent
        self._ok(self.post('/resource_providers', body))
        generation = 0
        if inventory:
            inv = {rc: (v if isinstance(v, dict) else {'total': v})
                   for rc, v in inventory.items()}
            generation = self._ok(self.put(
                f'/resource_providers/{uuid}/inventories',
                {'resource_provider_generation': generation, 'inventories': inv})
            ).json['resource_provider_generation']
        if traits:
            for t in traits:
                if t.startswith('CUSTOM_'):
                    self.put(f'/traits/{t}')
            generation = self._ok(self.put(
                f'/resource_providers/{uuid}/traits',
                {'resource_provider_generation': generation, 'traits': list(traits)})
            ).json['resource_provider_generation']
        if aggregates:
            self._ok(self.put(
                f'/resource_providers/{uuid}/aggregates',
                {'resource_provider_generation': generation,
                 'aggregates': list(aggregates)}))
        return uuid

    def claim(self, consumer: str, allocations: dict, *, generation=None,
              project='proj', user='user', mv: str = LATEST) -> Result:
        body = {'allocations': {rp: {'resources': res} for rp, res in allocations.items()},
                'project_id': project, 'user_id': user,
                'consumer_generation': generation, 'consumer_type': 'INSTANCE'}
        return self.put(f'/allocations/{consumer}', body, mv=mv)

    @staticmethod
    def _ok(result: Result) -> Result:
        assert result.status < 300, (result.status, result.text)
        return result


_template: list[str] = []


def _migrated_template() -> str:
    """A migrated, seeded database file, built once per test process."""
    if not _template:
        folder = tempfile.mkdtemp(prefix='placement-template-')
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        path = os.path.join(folder, 'placement.db')
        engine = engines.create_engine(f'sqlite:///{path}')
        migrate.sync('placement', engine)
        from placement.objects import standards
        standards.sync(engine)
        engine.dispose()
        _template.append(path)
    return _template[0]


_DATA_TABLES = ('allocations, consumers, projects, users, consumer_types, '
                'resource_provider_traits, resource_provider_aggregates, '
                'placement_aggregates, inventories, resource_providers')


@pytest.fixture(scope='module')
def _postgres_engine(postgres_server):
    """One migrated PostgreSQL database per test module, emptied per test."""
    url = postgres_server.create_database('placement_functional')
    engine = engines.create_engine(url)
    migrate.sync('placement', engine)
    yield engine
    engine.dispose()
    postgres_server.drop_database(url)


@pytest.fixture(params=['sqlite', 'postgresql'])
def api(request, tmp_path):
    """The app on SQLite (a fresh file) and on PostgreSQL (emptied tables):
    the writer has a separate PostgreSQL path (one server-side call), so
    every case runs on both."""
    import sqlalchemy as sa

    from placement.objects import consumer, standards
    from placement.wsgi import make_app
    if request.param == 'sqlite':
        path = tmp_path / 'placement.db'
        shutil.copy(_migrated_template(), path)
        engine = engines.create_engine(f'sqlite:///{path}')
    else:
        engine = request.getfixturevalue('_postgres_engine')
        with engine.begin() as conn:
            conn.execute(sa.text(f'TRUNCATE {_DATA_TABLES} RESTART IDENTITY CASCADE'))
            conn.execute(sa.text('DELETE FROM resource_classes WHERE id >= 10000'))
            conn.execute(sa.text("DELETE FROM traits WHERE name LIKE 'CUSTOM\\_%'"))
        standards.sync(engine)
    consumer.forget_cached_names()
    yield Api(make_app(engine, auth_strategy='noauth2', sync_standards=False), engine)
    if request.param == 'sqlite':
        engine.dispose()
