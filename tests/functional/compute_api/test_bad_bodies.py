"""Bad request bodies sent to every route that takes one: each a 4xx in Nova's words, never a 5xx.

Not random: a fixed sweep of the shapes clients get wrong (not JSON, the
wrong JSON type at each level, nulls, empty strings, numbers too large for
any column, strings where numbers go, unknown fields), sent as an admin so
that the policy lets them reach validation.
"""
from __future__ import annotations

import json

import pytest

from cellplane.objects import flavors
from tests.functional.compute_api.harness import ComputeCloud

ADMIN = 'admin:admin'
HUGE = 2 ** 70

ANY_BODY = [b'', b'not json', b'{"a": ', b'null', b'[]', b'"text"', b'1', b'{}', b'{"\x00": 1}']

SERVER = [
    {'server': None}, {'server': []}, {'server': 'x'}, {'server': {}},
    {'server': {'name': None, 'flavorRef': 'small'}},
    {'server': {'name': '', 'flavorRef': 'small'}},
    {'server': {'name': 'x' * 300, 'flavorRef': 'small'}},
    {'server': {'name': 'x', 'flavorRef': None}},
    {'server': {'name': 'x', 'flavorRef': {}}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'min_count': 0}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'min_count': -1}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'max_count': HUGE}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'max_count': '1e3'}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'availability_zone': ''}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'availability_zone': 5}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'imageRef': ['a']}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': 'auto'}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'metadata': {'k': 'v'}}},
    {'server': {'name': 'x', 'flavorRef': 'small'}, 'os:scheduler_hints': None},
    {'server': {'name': 'x', 'flavorRef': 'small'}, 'os:scheduler_hints': {'group': ''}},
    {'server': {'name': 'x', 'flavorRef': 'small'}, 'os:scheduler_hints': {'same_host': []}},
    {'server': {'name': 'x', 'flavorRef': 'small'},
     'os:scheduler_hints': {'same_domain': 'no-level-here'}},
    {'server': {'name': 'x', 'flavorRef': 'small'},
     'os:scheduler_hints': {'different_domain': 'rack:not-a-server'}},
    {'server': {'name': 'x', 'flavorRef': 'small'}, 'extra': 1},
    {'server': {'name': 'x', 'flavorRef': 'small', 'return_reservation_id': True}},
]

FLAVOR = [
    {'flavor': None}, {'flavor': {}}, {'flavor': {'name': 'f'}},
    {'flavor': {'name': 'f', 'ram': HUGE, 'vcpus': 1, 'disk': 1}},
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': HUGE, 'disk': 1}},
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': HUGE}},
    {'flavor': {'name': 'f', 'ram': '1.5', 'vcpus': 1, 'disk': 1}},
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 1, 'rxtx_factor': 'fast'}},
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 1, 'rxtx_factor': HUGE}},
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 1, 'swap': HUGE}},
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 1,
                'OS-FLV-EXT-DATA:ephemeral': 'x'}},
    {'flavor': {'name': ' f', 'ram': 1, 'vcpus': 1, 'disk': 1}},
    {'flavor': {'name': 'f', 'id': '', 'ram': 1, 'vcpus': 1, 'disk': 1}},
    {'flavor': {'name': 'f', 'id': 'a/b', 'ram': 1, 'vcpus': 1, 'disk': 1}},
]

EXTRA_SPECS = [{'extra_specs': None}, {'extra_specs': []}, {'extra_specs': {'': 'x'}},
               {'extra_specs': {'k': None}}, {'extra_specs': {'k': {'nested': 1}}},
               {'extra_specs': {'resources:VCPU': 'many'}}, {'extra_specs': {'k' * 300: 'v'}}]
ONE_SPEC = [{}, {'k': 'v', 'j': 'w'}, {'other': 'v'}, {'k': None}, {'k': ['v']}]
ACTION = [{'addTenantAccess': None}, {'addTenantAccess': {}},
          {'addTenantAccess': {'tenant': ''}}, {'removeTenantAccess': {'tenant': 5}},
          {'addTenantAccess': {'tenant': 'p'}, 'removeTenantAccess': {'tenant': 'p'}},
          {'deleteEverything': True}]

CASES = ([('POST', '/v2.1/servers', b) for b in SERVER]
         + [('POST', '/v2.1/flavors', b) for b in FLAVOR]
         + [('POST', '/v2.1/flavors/small/os-extra_specs', b) for b in EXTRA_SPECS]
         + [('PUT', '/v2.1/flavors/small/os-extra_specs/k', b) for b in ONE_SPEC]
         + [('POST', '/v2.1/flavors/private/action', b) for b in ACTION])
ROUTES_WITH_BODIES = sorted({(m, p) for m, p, _ in CASES})

# What 2.69 takes and refuses beyond 2.1 (2.19 description, 2.37 networks,
# 2.52 tags, 2.55 flavor descriptions and PUT /flavors/{id}).
SERVER_V269 = [
    {'server': {'name': 'x', 'flavorRef': 'small'}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': None}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': 'maybe'}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': [{'uuid': 'n'}]}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': 'auto', 'description': 5}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': 'auto',
                'description': 'x' * 256}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': 'auto', 'tags': ['t']}},
    {'server': {'name': 'x', 'flavorRef': 'small', 'networks': 'auto'},
     'OS-SCH-HNT:scheduler_hints': {'near': 'x'}},
]
FLAVOR_V269 = [
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 1, 'description': 5}},
    {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 1, 'description': '\x01'}},
]
FLAVOR_UPDATE = [{}, {'flavor': None}, {'flavor': {}}, {'flavor': {'description': 5}},
                 {'flavor': {'description': 'd', 'name': 'renamed'}},
                 {'flavor': {'description': 'x' * 65536}}]
CASES_V269 = ([('POST', '/v2.1/servers', b) for b in SERVER_V269]
              + [('POST', '/v2.1/flavors', b) for b in FLAVOR_V269]
              + [('PUT', '/v2.1/flavors/small', b) for b in FLAVOR_UPDATE])


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api'), cells=1, hosts_per_cell=1)
    engine = cloud.services.api_engine
    flavors.create(engine, name='small', vcpus=1, memory_mb=128, flavorid='small')
    flavors.create(engine, name='private', vcpus=1, memory_mb=128, flavorid='private',
                   is_public=False)
    yield cloud
    cloud.stop()


def _answer_is_a_novas_4xx(answer):
    assert 400 <= answer.status < 500, (answer.status, answer.text)
    body = answer.json
    assert len(body) == 1
    (detail,) = body.values()
    assert detail['code'] == answer.status and '\n' not in detail['message']


@pytest.mark.parametrize('method, path', ROUTES_WITH_BODIES)
@pytest.mark.parametrize('raw', ANY_BODY)
def test_a_body_of_the_wrong_shape_is_refused(api, method, path, raw):
    _answer_is_a_novas_4xx(api.request(method, path, raw=raw, token=ADMIN))


@pytest.mark.parametrize('method, path, body', CASES)
def test_a_bad_body_is_a_4xx_and_writes_nothing(api, method, path, body):
    before = ([f for f in flavors.list_all(api.services.api_engine)],
              flavors.projects_with_access(api.services.api_engine))
    answer = api.request(method, path, raw=json.dumps(body).encode(), token=ADMIN)
    _answer_is_a_novas_4xx(answer)
    after = ([f for f in flavors.list_all(api.services.api_engine)],
             flavors.projects_with_access(api.services.api_engine))
    assert after == before
    assert api.request('GET', '/v2.1/servers?all_tenants=1', token=ADMIN).json == {
        'servers': []}


@pytest.mark.parametrize('raw', ANY_BODY)
def test_a_flavor_update_of_the_wrong_shape_is_refused(api, raw):
    _answer_is_a_novas_4xx(api.request('PUT', '/v2.1/flavors/small', raw=raw, token=ADMIN,
                                       version='2.69'))


@pytest.mark.parametrize('method, path, body', CASES_V269)
def test_a_bad_body_at_2_69_is_a_4xx_and_writes_nothing(api, method, path, body):
    before = flavors.list_all(api.services.api_engine)
    answer = api.request(method, path, raw=json.dumps(body).encode(), token=ADMIN,
                         version='2.69')
    _answer_is_a_novas_4xx(answer)
    assert flavors.list_all(api.services.api_engine) == before
    assert api.request('GET', '/v2.1/servers?all_tenants=1', token=ADMIN).json == {
        'servers': []}
