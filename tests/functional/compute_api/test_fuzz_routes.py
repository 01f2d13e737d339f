"""Every route of the compute API, fuzzed: bad bodies, query strings, versions and path ids never make a 5xx.

The routes come from the route table itself (``cellplane_api.handler.ROUTES``,
what ``tests/unit/test_compute_api_routes.py`` walks), so a route added there is
fuzzed here without a line changed. For each method of each route, hypothesis
sends requests to the app in-process (``ComputeCloud``, embedded mode) built
from:

- a path whose placeholders are real ids (a flavor, a server, a group, a
  service, a hypervisor, ...) or any text;
- a query string of the parameter names the handlers read, and others, with
  values of any shape;
- a microversion in either header, valid or not;
- for POST and PUT, a body: any JSON (NaN and huge numbers too), bytes that are
  not JSON, or a valid body of the route with one field changed, removed or
  added;
- mostly as an admin (so that the policy lets the request reach validation),
  sometimes as a project member.

Asserted for every answer: no 5xx (but Nova's 501 for a hypervisor's uptime);
a 4xx is Nova's error body, one key naming the error with ``code`` (the
status) and a one-line ``message``; and a refused write leaves the servers,
flavors (their specs and access), groups, quotas, aggregates and compute
services as they were.

Bounded for CI: ``derandomize`` makes the examples the same on every run and
``CELLPLANE_FUZZ_EXAMPLES`` (default 12) sets how many per route and method;
set it higher to hunt (the bugs this found are pinned in
``test_fuzz_findings.py``).
"""
from __future__ import annotations

import json
import math
import os
import re
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cellplane.objects import aggregates, flavors, instance_mappings, quotas, server_groups
from cellplane.objects import services as service_rows
from cellplane_api import handler
from tests.functional.compute_api.harness import DEADLINE_SECONDS, ComputeCloud

ADMIN = 'admin:admin'
EXAMPLES = int(os.environ.get('CELLPLANE_FUZZ_EXAMPLES', '12'))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large, HealthCheck.filter_too_much])

# Nova's error keys (nova/api/openstack/wsgi.py's Fault names them by status).
NOVA_ERROR_KEYS = {'badRequest', 'unauthorized', 'forbidden', 'overLimit', 'itemNotFound',
                   'badMethod', 'notAcceptable', 'conflictingRequest', 'unsupportedMediaType',
                   'computeFault', 'notImplemented'}
# The one 5xx Nova answers on purpose: uptime of a hypervisor whose driver has none.
EXPECTED_5XX = {('GET', '/os-hypervisors/{hypervisor_id}/uptime'): 501}

ROUTES = sorted((method, template) for template, methods in handler.ROUTES.items()
                for method in methods)

# The parameters the handlers read, so that fuzzed values reach their parsing.
QUERY_NAMES = [
    'limit', 'marker', 'sort_key', 'sort_dir', 'changes-since', 'changes-before',
    'all_tenants', 'all_projects', 'project_id', 'tenant_id', 'user_id', 'name', 'status',
    'host', 'node', 'image', 'flavor', 'ip', 'ip6', 'reservation_id', 'tags', 'tags-any',
    'not-tags', 'not-tags-any', 'availability_zone', 'uuid', 'minRam', 'minDisk', 'is_public',
    'offset', 'with_servers', 'hypervisor_hostname_pattern', 'binary', 'request_id',
    'instance_uuid', 'deleted', 'start', 'end', 'detailed', 'usage', 'defaults']
GOOD_VERSIONS = ['2.1', '2.11', '2.15', '2.19', '2.26', '2.37', '2.47', '2.53', '2.55', '2.58',
                 '2.61', '2.64', '2.66', '2.69']
VERSIONS = ['2.1', '2.11', '2.15', '2.26', '2.37', '2.47', '2.53', '2.55', '2.58', '2.61',
            '2.64', '2.66', '2.69', 'latest', '2.70', '3.0', '1.1', '2', '2.', '.1', '2.01',
            '2.1.1', '', ' ', 'compute', '99999999999999999999.1', '-2.1', '2.-1', 'nan']


def _text(max_size: int = 40):
    # Headers and bodies carry what a client may send: anything but surrogates.
    return st.text(st.characters(exclude_categories=('Cs',)), max_size=max_size)


_NUMBERS = st.one_of(
    st.integers(), st.integers(min_value=-2 ** 80, max_value=2 ** 80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 2 ** 31, 2 ** 63, 2 ** 64, 10 ** 30, math.nan, math.inf]))
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), _NUMBERS, _text()),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_text(12), inner, max_size=4)),
    max_leaves=12)
SCALARS = st.one_of(st.none(), st.booleans(), _NUMBERS, _text(),
                    st.sampled_from(['', ' ', 'x' * 300, '1', '-1', 'true', 'none', 'nova']))


def _query_value():
    return st.one_of(_text(), st.integers().map(str),
                     st.sampled_from(['', '0', '-1', '1', 'true', 'False', 'none', 'asc',
                                      'desc', 'ACTIVE', 'nan', '1e400', '2026-02-30T00:00:00',
                                      '2026-01-01T00:00:00Z', '99999-01-01', 'created_at',
                                      '[', '(', '*', '%', '\\', '\x00', str(2 ** 70)]))


QUERY = st.lists(st.tuples(st.one_of(st.sampled_from(QUERY_NAMES), _text(10)), _query_value()),
                 max_size=3)


# A header's value reaches WSGI as latin-1 text.
_LATIN1 = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xff), max_size=20)


def _version_headers(version: str):
    """Mostly ``version`` asked the two ways clients ask; sometimes garbage."""
    value = st.one_of(st.sampled_from(VERSIONS), _LATIN1)
    return st.one_of(
        st.sampled_from([{'OpenStack-API-Version': f'compute {version}'},
                         {'X-OpenStack-Nova-API-Version': version}]),
        st.just({'OpenStack-API-Version': f'compute {version}'}),
        value.map(lambda v: {'OpenStack-API-Version': f'compute {v}'}),
        _LATIN1.map(lambda v: {'OpenStack-API-Version': v}),
        st.tuples(value, value).map(lambda v: {'OpenStack-API-Version': f'compute {v[0]}',
                                               'X-OpenStack-Nova-API-Version': v[1]}))


def _mutated(sample: dict):
    """``sample`` as it is, or with one field (at the top or one level down) changed, removed or added."""
    def change(draw):
        body = json.loads(json.dumps(sample))
        holders = [body] + [v for v in body.values() if isinstance(v, dict)]
        holder = draw(st.sampled_from(holders))
        keys = sorted(holder)
        what = draw(st.sampled_from(['change', 'remove', 'add', 'keep'] if keys
                                    else ['add', 'keep']))
        if what == 'keep':
            pass
        elif what == 'add':
            holder[draw(_text(12))] = draw(JSON)
        elif what == 'remove':
            del holder[draw(st.sampled_from(keys))]
        else:
            holder[draw(st.sampled_from(keys))] = draw(st.one_of(SCALARS, JSON))
        return body
    return st.composite(lambda draw: change(draw))()


class Fixtures:
    """The real things the paths name, made once and made again before each route if one was deleted."""

    def __init__(self, api: ComputeCloud):
        self.api = api
        self.group = self.server = self.request_id = None
        aggregates.create(api.services.api_engine, 'rack-a', zone='az-a')
        aggregates.add_host(api.services.api_engine, 'rack-a', 'cell1-host1')
        self.restore()

    def restore(self) -> None:
        api, engine = self.api, self.api.services.api_engine
        settle(api)
        known = {f.flavorid for f in flavors.list_all(engine)}
        for name, ram, public in (('small', 64, True), ('medium', 96, True),
                                  ('private', 64, False)):
            if name not in known:
                flavors.create(engine, name=name, vcpus=1, memory_mb=ram, flavorid=name,
                               is_public=public)
            flavors.set_extra_specs(engine, name, {'hw:cpu_policy': 'shared'})
        if 'demo' not in flavors.projects_with_access(engine, ['private']).get('private', []):
            flavors.add_access(engine, 'private', 'demo')
        for project in ('demo', 'admin'):
            quotas.forget(engine, project)
        for cell in api.services.cells.enabled():
            cell_engine = api.services.cells.engine(cell.uuid)
            for row in service_rows.list_all(cell_engine):
                service_rows.set_disabled(cell_engine, row['host'], row['binary'],
                                          disabled=False)
                service_rows.set_forced_down(cell_engine, row['host'], row['binary'],
                                             forced_down=False)
        if self.group is None or api.request(
                'GET', f'/v2.1/os-server-groups/{self.group}').status == 404:
            self.group = api.request('POST', '/v2.1/os-server-groups', {
                'server_group': {'name': f'fuzz-{len(server_groups.list_all(engine))}',
                                 'policies': ['anti-affinity']}}).json['server_group']['id']
        if self.server is None or api.request(
                'GET', f'/v2.1/servers/{self.server}').status == 404:
            answer = api.request('POST', '/v2.1/servers', {
                'server': {'name': 'fuzz', 'flavorRef': 'small'}})
            assert answer.status == 202, answer.text
            self.server = answer.json['server']['id']
            self.request_id = answer.headers['x-openstack-request-id']
            api.wait_for_status(self.server, 'ACTIVE')
        services_21 = api.request('GET', '/v2.1/os-services', token=ADMIN).json['services']
        services_253 = api.request('GET', '/v2.1/os-services', token=ADMIN,
                                   version='2.53').json['services']
        hypervisors_21 = api.request('GET', '/v2.1/os-hypervisors', token=ADMIN).json[
            'hypervisors']
        hypervisors_253 = api.request('GET', '/v2.1/os-hypervisors', token=ADMIN,
                                      version='2.53').json['hypervisors']
        self.ids = {
            'flavor_id': ['small', 'medium', 'private'],
            'key': ['hw:cpu_policy', 'k'],
            'tenant_id': ['demo', 'admin'],
            'server_id': [self.server],
            'request_id': [self.request_id],
            'server_group_id': [self.group],
            'service_id': (['enable', 'disable', 'disable-log-reason', 'force-down']
                           + [str(s['id']) for s in services_21 + services_253]),
            'hypervisor_id': ([str(h['id']) for h in hypervisors_21 + hypervisors_253]
                              + [h['hypervisor_hostname'] for h in hypervisors_21]),
            'aggregate_id': [str(a['id']) for a in api.request(
                'GET', '/v2.1/os-aggregates', token=ADMIN).json['aggregates']],
        }
        self.hosts = sorted({s['host'] for s in services_21 if s['binary'] == 'cellplane-compute'})

    def path_value(self, name: str):
        known = self.ids.get(name, [])
        fuzzed = st.one_of(_text(30).filter(lambda s: s not in ('', '.', '..')),
                           st.integers().map(str), st.uuids().map(str))
        return st.sampled_from(known) | fuzzed if known else fuzzed

    def sample_bodies(self, method: str, template: str, version: str) -> list[dict]:
        """Valid bodies of the route at ``version``, for the near-misses."""
        host = self.hosts[0]
        mv = tuple(int(n) for n in version.split('.'))
        server = {'name': 'fz', 'flavorRef': 'small', 'imageRef': 'img', 'min_count': 1,
                  'max_count': 1, 'availability_zone': 'az-a'}
        if mv >= (2, 19):
            server['description'] = 'd'
        if mv >= (2, 37):
            server['networks'] = 'none'
        group = ({'name': 'fz', 'policy': 'anti-affinity', 'rules': {'max_server_per_host': 1}}
                 if mv >= (2, 64) else {'name': 'fz', 'policies': ['anti-affinity']})
        service = ([{'status': 'enabled', 'forced_down': False},
                    {'status': 'disabled', 'disabled_reason': 'r'}] if mv >= (2, 53) else
                   [{'host': host, 'binary': 'cellplane-compute', 'disabled_reason': 'r'},
                    {'host': host, 'binary': 'cellplane-compute', 'forced_down': False}])
        return {
            ('POST', '/servers'): [
                {'server': server},
                {'server': server, 'os:scheduler_hints': {
                    'group': self.group, 'same_host': [self.server],
                    'different_domain': f'rack:{self.server}'}}],
            ('POST', '/flavors'): [
                {'flavor': {'name': 'fz', 'id': 'fz', 'ram': 64, 'vcpus': 1, 'disk': 1,
                            'swap': 0, 'OS-FLV-EXT-DATA:ephemeral': 0, 'rxtx_factor': 1.0,
                            'os-flavor-access:is_public': True, 'description': 'd'}}],
            ('PUT', '/flavors/{flavor_id}'): [{'flavor': {'description': 'd'}}],
            ('POST', '/flavors/{flavor_id}/action'): [
                {'addTenantAccess': {'tenant': 'p'}}, {'removeTenantAccess': {'tenant': 'demo'}}],
            ('POST', '/flavors/{flavor_id}/os-extra_specs'): [
                {'extra_specs': {'hw:cpu_policy': 'shared', 'resources:VCPU': '1'}}],
            ('PUT', '/flavors/{flavor_id}/os-extra_specs/{key}'): [{'hw:cpu_policy': 'shared'}],
            ('PUT', '/os-quota-sets/{tenant_id}'): [
                {'quota_set': {'instances': 20, 'cores': 40, 'ram': 100000,
                               'server_groups': 10, 'server_group_members': 10,
                               'force': True}}],
            ('POST', '/os-server-groups'): [{'server_group': group}],
            ('PUT', '/os-services/{service_id}'): service,
            ('POST', '/servers/{server_id}/action'): [
                {'migrate': None}, {'migrate': {'host': host}},
                {'os-migrateLive': {'host': None, 'block_migration': 'auto'}},
                {'resize': {'flavorRef': 'medium'}}, {'confirmResize': None},
                {'revertResize': None}],
        }.get((method, template), [])

    def body(self, method: str, template: str, version: str):
        samples = self.sample_bodies(method, template, version)
        raw = st.one_of(
            JSON.map(lambda b: json.dumps(b).encode()),
            st.binary(max_size=40),
            st.sampled_from([b'', b'{', b'{"a": NaN}', b'{"a": 1e400}', b'[' * 500,
                             b'{"server": ' * 200, b'\xff\xfe', b'{"\\ud800": 1}']))
        if not samples:
            return raw
        near = st.sampled_from(samples).flatmap(_mutated).map(lambda b: json.dumps(b).encode())
        return st.one_of(near, near, raw)


def snapshot(api: ComputeCloud) -> dict:
    """What a refused request must not change."""
    engine = api.services.api_engine
    return {
        'flavors': flavors.list_all(engine),
        'access': flavors.projects_with_access(engine),
        'groups': [(g.uuid, g.name, g.project_id) for g in server_groups.list_all(engine)],
        'servers': sorted(m[0] for m in instance_mappings.mapped_at(engine)),
        'quotas': {p: quotas.overrides(engine, p) for p in ('demo', 'admin')},
        'aggregates': aggregates.list_all(engine),
        'services': sorted((cell.name, s['host'], s['binary'], s['disabled'],
                            s['disabled_reason'], s.get('forced_down'))
                           for cell in api.services.cells.enabled()
                           for s in service_rows.list_all(api.services.cells.engine(cell.uuid))),
    }


def settle(api: ComputeCloud) -> None:
    """Wait until no server is building, moving or being deleted (an accepted write's aftermath)."""
    def quiet():
        listed = api.request('GET', '/v2.1/servers/detail?all_tenants=1', token=ADMIN)
        assert listed.status == 200, listed.text
        return all(s['OS-EXT-STS:task_state'] is None and s['status'] not in (
            'BUILD', 'MIGRATING', 'RESIZE', 'REVERT_RESIZE') for s in listed.json['servers'])
    api.wait_until(quiet, f'the servers settled within {DEADLINE_SECONDS} s')


def assert_novas_answer(method: str, template: str, answer) -> None:
    expected = EXPECTED_5XX.get((method, template))
    assert answer.status < 500 or answer.status == expected, (answer.status, answer.text)
    if answer.status < 400:
        return
    body = answer.json
    assert isinstance(body, dict) and len(body) == 1, answer.text
    ((key, detail),) = body.items()
    assert key in NOVA_ERROR_KEYS, answer.text
    assert set(detail) == {'code', 'message'}, answer.text
    assert detail['code'] == answer.status, answer.text
    assert isinstance(detail['message'], str) and detail['message'], answer.text
    assert '\n' not in detail['message'], answer.text


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api-fuzz'), cells=2,
                         hosts_per_cell=1)
    cloud.fixtures = Fixtures(cloud)
    yield cloud
    cloud.stop()


def _path(template: str, values: dict) -> str:
    path = re.sub(r'\{(\w+)\}',
                  lambda m: urllib.parse.quote(values[m.group(1)], safe=''), template)
    return '/v2.1' + path


@pytest.mark.parametrize('method, template', ROUTES)
def test_a_route_answers_any_request_without_a_5xx(api, method, template):
    fixtures = api.fixtures
    fixtures.restore()
    names = re.findall(r'\{(\w+)\}', template)
    request = st.sampled_from(GOOD_VERSIONS).flatmap(lambda version: st.fixed_dictionaries({
        'ids': st.fixed_dictionaries({n: fixtures.path_value(n) for n in names}),
        'query': QUERY,
        'headers': _version_headers(version),
        'token': st.sampled_from([ADMIN, ADMIN, ADMIN, 'demo:demo']),
        'body': (fixtures.body(method, template, version) if method in ('POST', 'PUT')
                 else st.just(None)),
    }))

    @FUZZ_SETTINGS
    @given(request)
    def fuzz(asked):
        path = _path(template, asked['ids'])
        if asked['query']:
            path += '?' + urllib.parse.urlencode(asked['query'])
        before = snapshot(api) if method != 'GET' else None
        answer = api.request(method, path, raw=asked['body'], token=asked['token'],
                             headers=asked['headers'])
        assert_novas_answer(method, template, answer)
        if method == 'GET':
            return
        if answer.status >= 400:
            assert snapshot(api) == before, (answer.status, answer.text)
        else:
            settle(api)

    fuzz()
