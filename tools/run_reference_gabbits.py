"""Run the reference implementation's gabbi HTTP tests against cellplane-placement.

    .venv/bin/python tools/run_reference_gabbits.py [YAML ...]

The YAML files and gabbi come from an installed openstack-placement (the peer
venv built by shared/peers/placement/setup_venv.sh; override with
REFERENCE_SITE_PACKAGES). Each YAML file runs against our WSGI app in-process
on a fresh SQLite database. The reference's data fixtures (AllocationFixture,
SharedStorageFixture, NUMANetworkFixture, GranularFixture, ...) are executed
from its own source with their database helpers replaced by calls to our
HTTP API, so they build the same providers, inventories, traits, aggregates
and allocations. Policy, RBAC and CORS fixtures are not emulated: pass no
argument and those files are skipped. A development tool, not part of the
test suite (it needs the reference installed).
"""
import os, re, sys, shutil, tempfile, unittest, uuid
from cellplane.db import engines, migrate
from placement.wsgi import make_app
from placement.objects import consumer as consumer_mod, standards
from placement.client import InProcessTransport
SITE = os.environ.get('REFERENCE_SITE_PACKAGES', os.path.join(
    os.path.dirname(__file__), '..', '..', '.peers', 'placement-venv', 'lib', 'python3.11',
    'site-packages'))
sys.path.append(SITE)  # after our imports: its 'placement' must not shadow ours
from gabbi import driver, fixture
import os_resource_classes as orc
import os_traits as ot
from oslo_utils import uuidutils
class _Sentinels:
    def __init__(self): self._d = {}
    def __getattr__(self, name):
        if name.startswith('_'): raise AttributeError(name)
        return self._d.setdefault(name, str(uuid.uuid4()))
uuids = _Sentinels()

G = SITE + '/placement/tests/functional/'
tmpl = tempfile.mkdtemp() + '/t.db'
e = engines.create_engine(f'sqlite:///{tmpl}'); migrate.sync('placement', e); standards.sync(e); e.dispose()
CURRENT = {}

class LazyApp:
    def __call__(self, environ, start_response):
        return CURRENT['app'](environ, start_response)

def T():
    return CURRENT['t']

def call(method, path, body=None, mv='1.39', ok=(200, 201, 204)):
    r = T().request(method, path, body, mv)
    assert r.status in ok, (method, path, body, r.status, r.body)
    return r.body

class Ctx: pass

class RP:
    def __init__(self, uuid, name): self.uuid, self.name = uuid, name
    def gen(self): return call('GET', f'/resource_providers/{self.uuid}')['generation']
    def set_aggregates(self, aggs):
        call('PUT', f'/resource_providers/{self.uuid}/aggregates', {'resource_provider_generation': self.gen(), 'aggregates': list(aggs)})

class User:
    def __init__(self, ctx=None, external_id=None): self.external_id = external_id
    def create(self): pass
Project = User

class tb:
    @staticmethod
    def create_provider(ctx, name, *aggs, **kw):
        u = kw.get('uuid', getattr(uuids, name))
        body = {'name': name, 'uuid': u}
        if kw.get('parent'): body['parent_provider_uuid'] = kw['parent']
        call('POST', '/resource_providers', body)
        rp = RP(u, name)
        if aggs: rp.set_aggregates(aggs)
        return rp
    @staticmethod
    def add_inventory(rp, rc, total, **kw):
        if rc.startswith('CUSTOM_'): call('PUT', f'/resource_classes/{rc}', mv='1.7')
        kw.setdefault('max_unit', total)
        inv = call('GET', f'/resource_providers/{rp.uuid}/inventories')
        invs = inv['inventories']; invs[rc] = dict(total=total, **kw)
        call('PUT', f'/resource_providers/{rp.uuid}/inventories', {'resource_provider_generation': inv['resource_provider_generation'], 'inventories': invs})
    @staticmethod
    def set_traits(rp, *traits):
        for t in traits:
            if t.startswith('CUSTOM_'): call('PUT', f'/traits/{t}')
        call('PUT', f'/resource_providers/{rp.uuid}/traits', {'resource_provider_generation': rp.gen(), 'traits': list(traits)})
    @staticmethod
    def ensure_consumer(ctx, user, project, consumer_id=None):
        c = Ctx(); c.uuid = consumer_id or uuidutils.generate_uuid(); c.user = user; c.project = project
        return c
    @staticmethod
    def set_allocation(ctx, rp, consumer, rc_used):
        call('PUT', f'/allocations/{consumer.uuid}', {'allocations': {rp.uuid: {'resources': rc_used}}, 'project_id': consumer.project.external_id, 'user_id': consumer.user.external_id}, mv='1.27')
    @staticmethod
    def create_user_and_project(ctx, prefix='fake'):
        return User(external_id=f'{prefix}-user'), Project(external_id=f'{prefix}-project')

class user_obj: User = User
class project_obj: Project = Project
class rc_obj:
    class ResourceClass:
        def __init__(self, ctx=None, name=None, context=None): self.name = name
        def create(self): call('PUT', f'/resource_classes/{self.name}', mv='1.7')

class ConfFixture:
    def config(self, **kw): pass

ENV = ['RP_UUID', 'RP_NAME', 'RP_UUID1', 'RP_NAME1', 'RP_UUID2', 'RP_NAME2', 'PROJECT_ID', 'ADMIN_PROJECT_ID', 'SERVICE_PROJECT_ID', 'USER_ID', 'PROJECT_ID_ALT', 'USER_ID_ALT', 'INSTANCE_UUID', 'MIGRATION_UUID', 'CONSUMER_UUID', 'PARENT_PROVIDER_UUID', 'ALT_PARENT_PROVIDER_UUID']

class APIFixture(fixture.GabbiFixture):
    def start_fixture(self):
        for k in ENV: os.environ[k] = str(uuid.uuid4())
        os.environ['CUSTOM_RES_CLASS'] = 'CUSTOM_IRON_NFV'; os.environ['CUSTOM_RES_CLASS1'] = 'CUSTOM_IRON_NFV1'; os.environ['CUSTOM_RES_CLASS2'] = 'CUSTOM_IRON_NFV2'
        d = tempfile.mkdtemp(); path = d + '/p.db'; shutil.copy(tmpl, path)
        engine = engines.create_engine(f'sqlite:///{path}'); consumer_mod.forget_cached_names()
        CURRENT['app'] = make_app(engine, auth_strategy='noauth2', sync_standards=False)
        CURRENT['t'] = InProcessTransport(CURRENT['app'])
        self.context = Ctx()
        self.conf_fixture = ConfFixture()
    def stop_fixture(self): pass

src = open(G + 'fixtures/gabbits.py').read()
start = src.index('class AllocationFixture')
end = src.index('class CORSFixture')
body = src[start:end] + src[src.index('class GranularFixture'):src.index('class OpenPolicyFixture')] + src[src.index('class NeutronQoSMultiSegmentFixture'):]
ns = dict(os=os, orc=orc, ot=ot, uuidutils=uuidutils, uuids=uuids, tb=tb, user_obj=user_obj, project_obj=project_obj, rc_obj=rc_obj, APIFixture=APIFixture, fixture=fixture)
exec(compile(body, 'fixtures', 'exec'), ns)
module = type(sys)('gabbit_fixtures'); module.__dict__.update(ns); sys.modules['gabbit_fixtures'] = module

names = sys.argv[1:] or sorted(
    n for n in os.listdir(G + 'gabbits') if n.endswith('.yaml')
    and not any(word in n for word in ('policy', 'rbac', 'cors')))
total = 0
for name in names:
    ydir = tempfile.mkdtemp(); shutil.copy(G + 'gabbits/' + name, ydir)
    suite = driver.build_tests(ydir, unittest.TestLoader(), host=None, intercept=LazyApp, fixture_module=module, test_loader_name='g')
    res = unittest.TextTestRunner(verbosity=0, stream=open(os.devnull, 'w')).run(suite)
    fails = res.failures + res.errors
    print(f'{name}: ran {res.testsRun}, failed {len(fails)}')
    for t, tb_ in fails:
        lines = [l for l in tb_.splitlines() if l.strip()]
        print('   FAIL', t.id().split('_', 2)[-1][:90], '|', ' '.join(lines[-4:])[:700])
    total += len(fails)
print('total failures', total)
sys.exit(1 if total else 0)
