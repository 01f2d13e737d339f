"""The reference's gabbi fixtures, run against cellplane-placement over its API.

The reference's data fixtures (AllocationFixture, SharedStorageFixture,
NUMANetworkFixture, GranularFixture, ...) are executed from its own source,
with the database helpers they call (its tests/functional/db/test_base)
replaced by calls to our HTTP API, so they build the same providers,
inventories, traits, aggregates and allocations whatever serves the API:
the app in-process or a live daemon. Which one is the ``Target`` set with
``use(target)``; it gives each YAML file a clean database and a transport.

The policy and CORS fixtures only configure the server; here they name the
profile (see profiles.py) whose server a file needs.
"""
from __future__ import annotations

import os
import sys
import uuid
from typing import Protocol

import os_resource_classes as orc
import os_traits as ot
from gabbi import fixture
from oslo_utils import uuidutils

# The environment the reference's APIFixture sets up.
FRESH_UUIDS = ['RP_UUID', 'RP_NAME', 'RP_UUID1', 'RP_NAME1', 'RP_UUID2', 'RP_NAME2',
               'PROJECT_ID', 'ADMIN_PROJECT_ID', 'SERVICE_PROJECT_ID', 'USER_ID',
               'PROJECT_ID_ALT', 'USER_ID_ALT', 'INSTANCE_UUID', 'MIGRATION_UUID',
               'CONSUMER_UUID', 'PARENT_PROVIDER_UUID', 'ALT_PARENT_PROVIDER_UUID']
CUSTOM_CLASSES = {'CUSTOM_RES_CLASS': 'CUSTOM_IRON_NFV',
                  'CUSTOM_RES_CLASS1': 'CUSTOM_IRON_NFV1',
                  'CUSTOM_RES_CLASS2': 'CUSTOM_IRON_NFV2'}


class Target(Protocol):
    """What serves the API to one YAML file at a time."""

    def begin_file(self):
        """Clean database; return the transport (placement.client) to reach it."""

    def end_file(self) -> None: ...


_target: list[Target] = []
_transport: list = []


def use(target: Target) -> None:
    _target[:] = [target]


def call(method: str, path: str, body=None, mv: str = '1.39'):
    resp = _transport[0].request(method, path, body, mv)
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
    """A clean database per YAML file, and the reference's variables.

    ``profile`` names the server configuration the file needs.
    """

    profile = 'legacy'

    def start_fixture(self):
        for name in FRESH_UUIDS:
            os.environ[name] = str(uuid.uuid4())
        os.environ.update(CUSTOM_CLASSES)
        _transport[:] = [_target[0].begin_file()]
        self.context = object()
        self.conf_fixture = NoConfig()

    def stop_fixture(self):
        _transport.clear()
        _target[0].end_file()


class LegacyRBACPolicyFixture(APIFixture):
    profile = 'legacy'


class SecureRBACPolicyFixture(APIFixture):
    profile = 'secure'


class OpenPolicyFixture(APIFixture):
    profile = 'open'


class CORSFixture(APIFixture):
    profile = 'cors'


def load(functional_dir: str):
    """A module holding every fixture the reference's YAML files name."""
    with open(os.path.join(functional_dir, 'fixtures', 'gabbits.py')) as f:
        src = f.read()
    # The data fixtures, from the reference's own source; the rest is ours.
    body = (src[src.index('class AllocationFixture'):src.index('class CORSFixture')]
            + src[src.index('class GranularFixture'):src.index('class OpenPolicyFixture')]
            + src[src.index('class NeutronQoSMultiSegmentFixture'):])
    namespace = dict(
        os=os, orc=orc, ot=ot, uuidutils=uuidutils, uuids=DatabaseHelpers.sentinels,
        tb=DatabaseHelpers, user_obj=_Namespace(User=Owner),
        project_obj=_Namespace(Project=Owner), rc_obj=_Namespace(ResourceClass=ResourceClass),
        APIFixture=APIFixture, fixture=fixture,
        LegacyRBACPolicyFixture=LegacyRBACPolicyFixture,
        SecureRBACPolicyFixture=SecureRBACPolicyFixture,
        OpenPolicyFixture=OpenPolicyFixture, CORSFixture=CORSFixture)
    exec(compile(body, 'reference fixtures', 'exec'), namespace)
    module = type(sys)('reference_gabbit_fixtures')
    module.__dict__.update(namespace)
    sys.modules[module.__name__] = module
    return module
