"""Run the reference implementation's gabbi HTTP tests against cellplane-placement.

    .venv/bin/python tools/run_reference_gabbits.py [YAML ...]

The YAML files and gabbi come from an installed openstack-placement (the peer
venv built by shared/peers/placement/setup_venv.sh; override its
site-packages with REFERENCE_SITE_PACKAGES). Each YAML file runs against our
WSGI app in-process on a fresh SQLite database. The reference's data fixtures
(AllocationFixture, SharedStorageFixture, NUMANetworkFixture,
GranularFixture, ...) are executed from its own source, with the database
helpers they call replaced by calls to our HTTP API, so they build the same
providers, inventories, traits, aggregates and allocations. Policy, RBAC and
CORS fixtures are not emulated: without arguments those files are skipped.
With GABBI_POSTGRES_ADMIN_URL (say postgresql+psycopg2://postgres@127.0.0.1/postgres)
each file gets a fresh PostgreSQL database instead, dropped afterwards.
A development tool, not part of the test suite (it needs the reference).
Exit status 1 when any test fails.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import unittest
import uuid

# Ours first: the reference's site-packages also has a 'placement' package.
from cellplane.db import engines, migrate
from placement.client import InProcessTransport
from placement.objects import consumer as consumer_obj
from placement.objects import standards
from placement.wsgi import make_app

SITE = os.environ.get('REFERENCE_SITE_PACKAGES', os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..', '.peers', 'placement-venv',
    'lib', 'python3.11', 'site-packages'))
sys.path.append(SITE)

import os_resource_classes as orc  # noqa: E402
import os_traits as ot  # noqa: E402
from gabbi import driver, fixture  # noqa: E402
from oslo_utils import uuidutils  # noqa: E402

FUNCTIONAL = os.path.join(SITE, 'placement', 'tests', 'functional')
# The environment the reference's APIFixture sets up.
FRESH_UUIDS = ['RP_UUID', 'RP_NAME', 'RP_UUID1', 'RP_NAME1', 'RP_UUID2', 'RP_NAME2',
               'PROJECT_ID', 'ADMIN_PROJECT_ID', 'SERVICE_PROJECT_ID', 'USER_ID',
               'PROJECT_ID_ALT', 'USER_ID_ALT', 'INSTANCE_UUID', 'MIGRATION_UUID',
               'CONSUMER_UUID', 'PARENT_PROVIDER_UUID', 'ALT_PARENT_PROVIDER_UUID']
CUSTOM_CLASSES = {'CUSTOM_RES_CLASS': 'CUSTOM_IRON_NFV',
                  'CUSTOM_RES_CLASS1': 'CUSTOM_IRON_NFV1',
                  'CUSTOM_RES_CLASS2': 'CUSTOM_IRON_NFV2'}

_current: dict = {}   # the app (and its transport) of the YAML file running


class CurrentApp:
    """The WSGI app gabbi intercepts: whichever the running fixture made."""

    def __call__(self, environ, start_response):
        return _current['app'](environ, start_response)


def call(method: str, path: str, body=None, mv: str = '1.39'):
    resp = _current['transport'].request(method, path, body, mv)
    assert resp.status < 300, (method, path, body, resp.status, resp.body)
    return resp.body


class Sentinels:
    """oslo_utils' uuidsentinel: a stable random uuid per attribute name."""

    def __init__(self):
        self._uuids = {}

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)
        return self._uuids.setdefault(name, str(uuid.uuid4()))


class Provider:
    def __init__(self, uuid_: str, name: str):
        self.uuid, self.name = uuid_, name

    def generation(self) -> int:
        return call('GET', f'/resource_providers/{self.uuid}')['generation']

    def set_aggregates(self, aggregates) -> None:
        call('PUT', f'/resource_providers/{self.uuid}/aggregates',
             {'resource_provider_generation': self.generation(),
              'aggregates': list(aggregates)})


class Owner:
    """A project or a user: only its external id matters over HTTP."""

    def __init__(self, ctx=None, external_id=None):
        self.external_id = external_id

    def create(self):
        pass


class Consumer:
    def __init__(self, uuid_: str, user: Owner, project: Owner):
        self.uuid, self.user, self.project = uuid_, user, project


class DatabaseHelpers:
    """The reference's tests/functional/db/test_base helpers, over HTTP."""

    sentinels = Sentinels()

    @classmethod
    def create_provider(cls, ctx, name, *aggregates, **kwargs):
        rp_uuid = kwargs.get('uuid', getattr(cls.sentinels, name))
        body = {'name': name, 'uuid': rp_uuid}
        if kwargs.get('parent'):
            body['parent_provider_uuid'] = kwargs['parent']
        call('POST', '/resource_providers', body)
        provider = Provider(rp_uuid, name)
        if aggregates:
            provider.set_aggregates(aggregates)
        return provider

    @staticmethod
    def add_inventory(provider, rc, total, **kwargs):
        if rc.startswith('CUSTOM_'):
            call('PUT', f'/resource_classes/{rc}', mv='1.7')
        kwargs.setdefault('max_unit', total)
        current = call('GET', f'/resource_providers/{provider.uuid}/inventories')
        inventories = current['inventories']
        inventories[rc] = dict(total=total, **kwargs)
        call('PUT', f'/resource_providers/{provider.uuid}/inventories',
             {'resource_provider_generation': current['resource_provider_generation'],
              'inventories': inventories})

    @staticmethod
    def set_traits(provider, *traits):
        for name in traits:
            if name.startswith('CUSTOM_'):
                call('PUT', f'/traits/{name}')
        call('PUT', f'/resource_providers/{provider.uuid}/traits',
             {'resource_provider_generation': provider.generation(),
              'traits': list(traits)})

    @staticmethod
    def ensure_consumer(ctx, user, project, consumer_id=None):
        return Consumer(consumer_id or uuidutils.generate_uuid(), user, project)

    @staticmethod
    def set_allocation(ctx, provider, consumer, resources):
        # As the reference's helper: replaces all of the consumer's allocations.
        call('PUT', f'/allocations/{consumer.uuid}',
             {'allocations': {provider.uuid: {'resources': resources}},
              'project_id': consumer.project.external_id,
              'user_id': consumer.user.external_id}, mv='1.27')

    @staticmethod
    def create_user_and_project(ctx, prefix='fake'):
        return Owner(external_id=f'{prefix}-user'), Owner(external_id=f'{prefix}-project')


class ResourceClass:
    def __init__(self, ctx=None, name=None, context=None):
        self.name = name

    def create(self):
        call('PUT', f'/resource_classes/{self.name}', mv='1.7')


class _Namespace:
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


class NoConfig:
    def config(self, **kwargs):
        pass


class APIFixture(fixture.GabbiFixture):
    """A fresh database and app per YAML file, and the reference's variables."""

    template: str | None = None

    def start_fixture(self):
        for name in FRESH_UUIDS:
            os.environ[name] = str(uuid.uuid4())
        os.environ.update(CUSTOM_CLASSES)
        admin_url = os.environ.get('GABBI_POSTGRES_ADMIN_URL')
        if admin_url:
            engine = _fresh_postgres(admin_url)
        else:
            path = os.path.join(tempfile.mkdtemp(prefix='gabbi-'), 'placement.db')
            shutil.copy(self.template, path)
            engine = engines.create_engine(f'sqlite:///{path}')
        _current['engine'] = engine
        consumer_obj.forget_cached_names()
        _current['app'] = make_app(engine, auth_strategy='noauth2', sync_standards=False)
        _current['transport'] = InProcessTransport(_current['app'])
        self.context = object()
        self.conf_fixture = NoConfig()

    def stop_fixture(self):
        engine = _current.pop('engine')
        engine.dispose()
        if engine.dialect.name == 'postgresql':
            _drop_postgres(os.environ['GABBI_POSTGRES_ADMIN_URL'], engine.url.database)


def _fresh_postgres(admin_url: str):
    import sqlalchemy as sa
    name = f'cp_gabbi_{uuid.uuid4().hex[:10]}'
    admin = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE {name}')
    admin.dispose()
    url = sa.engine.make_url(admin_url).set(database=name)
    engine = engines.create_engine(url.render_as_string(hide_password=False))
    migrate.sync('placement', engine)
    standards.sync(engine)
    return engine


def _drop_postgres(admin_url: str, name: str) -> None:
    import sqlalchemy as sa
    admin = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS {name}')
    admin.dispose()


def _fixture_module():
    """The reference's data fixtures, run with our helpers underneath."""
    with open(os.path.join(FUNCTIONAL, 'fixtures', 'gabbits.py')) as f:
        src = f.read()
    body = (src[src.index('class AllocationFixture'):src.index('class CORSFixture')]
            + src[src.index('class GranularFixture'):src.index('class OpenPolicyFixture')]
            + src[src.index('class NeutronQoSMultiSegmentFixture'):])
    namespace = dict(
        os=os, orc=orc, ot=ot, uuidutils=uuidutils, uuids=DatabaseHelpers.sentinels,
        tb=DatabaseHelpers, user_obj=_Namespace(User=Owner),
        project_obj=_Namespace(Project=Owner), rc_obj=_Namespace(ResourceClass=ResourceClass),
        APIFixture=APIFixture, fixture=fixture)
    exec(compile(body, 'reference fixtures', 'exec'), namespace)
    module = type(sys)('reference_gabbit_fixtures')
    module.__dict__.update(namespace)
    sys.modules[module.__name__] = module
    return module


def _template_database() -> str:
    path = os.path.join(tempfile.mkdtemp(prefix='gabbi-template-'), 'placement.db')
    engine = engines.create_engine(f'sqlite:///{path}')
    migrate.sync('placement', engine)
    standards.sync(engine)
    engine.dispose()
    return path


def main(names: list[str]) -> int:
    gabbits = os.path.join(FUNCTIONAL, 'gabbits')
    names = names or sorted(
        n for n in os.listdir(gabbits) if n.endswith('.yaml')
        and not any(word in n for word in ('policy', 'rbac', 'cors')))
    APIFixture.template = _template_database()
    module = _fixture_module()
    failures = 0
    for name in names:
        folder = tempfile.mkdtemp(prefix='gabbi-yaml-')
        shutil.copy(os.path.join(gabbits, name), folder)
        suite = driver.build_tests(folder, unittest.TestLoader(), host=None,
                                   intercept=CurrentApp, fixture_module=module,
                                   test_loader_name='reference')
        with open(os.devnull, 'w') as quiet:
            result = unittest.TextTestRunner(verbosity=0, stream=quiet).run(suite)
        failed = result.failures + result.errors
        print(f'{name}: ran {result.testsRun}, failed {len(failed)}')
        for test, trace in failed:
            lines = [line for line in trace.splitlines() if line.strip()]
            print('   FAIL', test.id().split('_', 2)[-1][:90], '|', ' '.join(lines[-4:])[:700])
        failures += len(failed)
    print('total failures', failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
