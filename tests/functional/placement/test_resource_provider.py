"""/resource_providers and /resource_providers/{uuid}: CRUD, trees, list filters."""
from __future__ import annotations

import uuid

import pytest

from tests.functional.placement.conftest import error

AGG1 = 'f918801a-5e54-4bee-9095-09a9d0c786b8'
AGG2 = 'a893eb5c-e2a0-4251-ab26-f71d3b0cfc0b'


def _uuids(resp) -> set[str]:
    return {rp['uuid'] for rp in resp.json['resource_providers']}


# --------------------------------------------------------------- create/read

def test_create_at_1_20_returns_the_provider(client):
    rp_uuid = str(uuid.uuid4())
    resp = client.post('/resource_providers', {'name': 'cn1', 'uuid': rp_uuid})
    assert resp.status_int == 200
    assert resp.headers['Location'].endswith(f'/resource_providers/{rp_uuid}')
    body = resp.json
    assert body['uuid'] == rp_uuid
    assert body['name'] == 'cn1'
    assert body['generation'] == 0
    assert body['parent_provider_uuid'] is None
    assert body['root_provider_uuid'] == rp_uuid
    assert {link['rel']: link['href'] for link in body['links']} == {
        'self': f'/resource_providers/{rp_uuid}',
        'inventories': f'/resource_providers/{rp_uuid}/inventories',
        'usages': f'/resource_providers/{rp_uuid}/usages',
        'aggregates': f'/resource_providers/{rp_uuid}/aggregates',
        'traits': f'/resource_providers/{rp_uuid}/traits',
        'allocations': f'/resource_providers/{rp_uuid}/allocations'}


def test_create_before_1_20_is_201_without_body(client):
    resp = client.post('/resource_providers', {'name': 'cn1'}, mv='1.19')
    assert resp.status_int == 201
    assert resp.body == b''
    assert 'Content-Type' not in resp.headers
    assert '/resource_providers/' in resp.headers['Location']


def test_uuid_is_generated_when_not_given(client):
    body = client.provider('cn1')
    assert str(uuid.UUID(body['uuid'])) == body['uuid']


def test_get_shape_follows_microversion(client):
    rp = client.provider('cn1')
    url = f'/resource_providers/{rp["uuid"]}'
    assert set(client.get(url, mv='1.13').json) == {'uuid', 'name', 'generation', 'links'}
    assert len(client.get(url, mv='1.10').json['links']) == 5
    assert len(client.get(url, mv='1.11').json['links']) == 6
    assert len(client.get(url, mv='1.0').json['links']) == 3
    assert set(client.get(url).json) == {'uuid', 'name', 'generation', 'links',
                                         'parent_provider_uuid', 'root_provider_uuid'}


def test_get_missing_provider_is_404(client):
    missing = 'd67370b5-4dc0-470d-a4fa-85e8e89abc6c'
    resp = client.get(f'/resource_providers/{missing}')
    assert resp.status_int == 404
    assert f'No resource provider with uuid {missing} found' in error(resp)['detail']
    assert client.get('/resource_providers/random_sauce').status_int == 404


def test_duplicate_name_is_409_duplicate_name(client):
    client.provider('cn1')
    resp = client.post('/resource_providers', {'name': 'cn1'})
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.duplicate_name'
    assert 'Conflicting resource provider name: cn1 already exists' in error(resp)['detail']


def test_duplicate_uuid_without_dashes_is_409(client):
    rp_uuid = '2290d4af-9e6e-400b-9d65-1ee01376f71a'
    client.provider('dashed', uuid=rp_uuid)
    resp = client.post('/resource_providers', {'name': 'other',
                                               'uuid': rp_uuid.replace('-', '')})
    assert resp.status_int == 409
    assert f'Conflicting resource provider uuid: {rp_uuid} already exists' in \
        error(resp)['detail']


@pytest.mark.parametrize('body, message', [
    ({'name': 'x' * 201}, "Failed validating 'maxLength'"),
    ({'name': 'ok', 'uuid': 'this is not a uuid'}, "Failed validating 'format'"),
    ({'transport': 'car'}, 'JSON does not validate'),
    ({'name': 'ok', 'root_provider_uuid': str(uuid.uuid4())}, 'Additional properties'),
])
def test_bad_create_bodies_are_400(client, body, message):
    resp = client.post('/resource_providers', body)
    assert resp.status_int == 400
    assert message in error(resp)['detail']


def test_unicode_names(client):
    name = '\u2603 snowman \U0001f600'
    rp = client.provider(name)
    assert client.get(f'/resource_providers/{rp["uuid"]}').json['name'] == name
    listed = client.get('/resource_providers?name=%E2%98%83%20snowman%20%F0%9F%98%80')
    assert _uuids(listed) == {rp['uuid']}


# --------------------------------------------------------------- update/delete

def test_rename_keeps_the_generation(client):
    rp = client.provider('cn1')
    resp = client.put(f'/resource_providers/{rp["uuid"]}', {'name': 'new name'}, mv='1.15')
    assert resp.status_int == 200
    assert resp.json['name'] == 'new name'
    assert resp.json['generation'] == 0
    assert resp.headers['Cache-Control'] == 'no-cache'
    assert 'Location' not in resp.headers


def test_rename_to_a_taken_name_is_409(client):
    client.provider('cn1')
    rp = client.provider('cn2')
    resp = client.put(f'/resource_providers/{rp["uuid"]}', {'name': 'cn1'})
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.duplicate_name'


def test_update_refuses_uuid_and_unknown_fields(client):
    rp = client.provider('cn1')
    for body in ({'name': 'x', 'uuid': str(uuid.uuid4())}, {'badfield': 'x'}):
        resp = client.put(f'/resource_providers/{rp["uuid"]}', body)
        assert resp.status_int == 400


def test_delete_then_404(client):
    rp = client.provider('cn1')
    url = f'/resource_providers/{rp["uuid"]}'
    assert client.delete(url).status_int == 204
    resp = client.delete(url)
    assert resp.status_int == 404
    assert 'found for delete' in error(resp)['detail']


def test_delete_removes_traits_aggregates_inventory(client):
    rp = client.provider('cn1')
    url = f'/resource_providers/{rp["uuid"]}'
    client.put(f'{url}/inventories', {'resource_provider_generation': 0,
                                      'inventories': {'VCPU': {'total': 4}}})
    client.put(f'{url}/traits', {'resource_provider_generation': 1,
                                 'traits': ['HW_CPU_X86_SSE']})
    client.put(f'{url}/aggregates', {'resource_provider_generation': 2,
                                     'aggregates': [AGG1]})
    assert client.delete(url).status_int == 204
    assert client.get('/traits?associated=true').json['traits'] == []


# --------------------------------------------------------------- trees

def test_nested_provider_has_parent_and_root(client):
    root = client.provider('root')
    child = client.provider('child', parent_provider_uuid=root['uuid'])
    grandchild = client.provider('grandchild', parent_provider_uuid=child['uuid'])
    assert child['parent_provider_uuid'] == root['uuid']
    assert grandchild['root_provider_uuid'] == root['uuid']
    in_tree = client.get(f'/resource_providers?in_tree={grandchild["uuid"]}')
    assert _uuids(in_tree) == {root['uuid'], child['uuid'], grandchild['uuid']}


def test_parent_before_1_14_is_a_schema_error(client):
    root = client.provider('root')
    resp = client.post('/resource_providers',
                       {'name': 'child', 'parent_provider_uuid': root['uuid']}, mv='1.13')
    assert resp.status_int == 400


def test_missing_or_self_parent_is_400(client):
    resp = client.post('/resource_providers', {
        'name': 'child', 'parent_provider_uuid': str(uuid.uuid4())})
    assert resp.status_int == 400
    assert 'parent provider UUID does not exist' in error(resp)['detail']
    me = str(uuid.uuid4())
    resp = client.post('/resource_providers', {
        'name': 'child', 'uuid': me, 'parent_provider_uuid': me})
    assert resp.status_int == 400
    assert 'parent provider UUID cannot be same as UUID' in error(resp)['detail']


def test_delete_parent_with_children_is_409(client):
    root = client.provider('root')
    client.provider('child', parent_provider_uuid=root['uuid'])
    resp = client.delete(f'/resource_providers/{root["uuid"]}')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.resource_provider.cannot_delete_parent'


def test_delete_parent_with_children_and_allocations_reports_the_children(client):
    """As the reference: the children are checked first, since they must go
    before their parent whatever it holds."""
    root = client.provider('root')['uuid']
    child = client.provider('child', parent_provider_uuid=root)['uuid']
    assert client.put(f'/resource_providers/{root}/inventories', {
        'resource_provider_generation': 0,
        'inventories': {'VCPU': {'total': 4}}}).status_int == 200
    assert client.put(f'/allocations/{uuid.uuid4()}', {
        'allocations': {root: {'resources': {'VCPU': 1}}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
        'consumer_type': 'INSTANCE'}).status_int == 204
    resp = client.delete(f'/resource_providers/{root}', mv='1.23')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.resource_provider.cannot_delete_parent'
    assert 'It has child resource providers.' in error(resp)['detail']
    assert client.delete(f'/resource_providers/{child}').status_int == 204
    resp = client.delete(f'/resource_providers/{root}', mv='1.23')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.resource_provider.inuse'
    assert 'Resource provider has allocations.' in error(resp)['detail']


def test_reparenting_needs_1_37_and_moves_the_subtree(client):
    old_root = client.provider('old')
    new_root = client.provider('new')
    child = client.provider('child', parent_provider_uuid=old_root['uuid'])
    leaf = client.provider('leaf', parent_provider_uuid=child['uuid'])
    url = f'/resource_providers/{child["uuid"]}'
    resp = client.put(url, {'name': 'child', 'parent_provider_uuid': new_root['uuid']},
                      mv='1.36')
    assert resp.status_int == 400
    assert 're-parenting a provider is not currently allowed' in error(resp)['detail']
    resp = client.put(url, {'name': 'child', 'parent_provider_uuid': new_root['uuid']},
                      mv='1.37')
    assert resp.status_int == 200
    assert resp.json['root_provider_uuid'] == new_root['uuid']
    leaf_now = client.get(f'/resource_providers/{leaf["uuid"]}').json
    assert leaf_now['root_provider_uuid'] == new_root['uuid']
    # un-parent: the child becomes the root of its own subtree
    assert client.put(url, {'name': 'child', 'parent_provider_uuid': None},
                      mv='1.36').status_int == 400
    resp = client.put(url, {'name': 'child', 'parent_provider_uuid': None}, mv='1.37')
    assert resp.json['root_provider_uuid'] == child['uuid']
    leaf_now = client.get(f'/resource_providers/{leaf["uuid"]}').json
    assert leaf_now['root_provider_uuid'] == child['uuid']


def test_parenting_a_root_is_allowed_before_1_37(client):
    a = client.provider('a')
    b = client.provider('b')
    resp = client.put(f'/resource_providers/{b["uuid"]}',
                      {'name': 'b', 'parent_provider_uuid': a['uuid']}, mv='1.14')
    assert resp.status_int == 200
    assert resp.json['root_provider_uuid'] == a['uuid']


def test_loops_are_refused(client):
    root = client.provider('root')
    child = client.provider('child', parent_provider_uuid=root['uuid'])
    for parent in (root['uuid'], child['uuid']):
        resp = client.put(f'/resource_providers/{root["uuid"]}',
                          {'name': 'root', 'parent_provider_uuid': parent})
        assert resp.status_int == 400
        assert 'creating loop in the provider tree is not allowed' in error(resp)['detail']


# --------------------------------------------------------------- list filters

def test_list_empty_has_cache_headers_at_1_15(client):
    resp = client.get('/resource_providers', mv='1.15')
    assert resp.json == {'resource_providers': []}
    assert resp.headers['Cache-Control'] == 'no-cache'
    assert 'Last-Modified' in resp.headers
    assert 'Last-Modified' not in client.get('/resource_providers', mv='1.14').headers


def test_filter_by_name_and_uuid(client):
    a = client.provider('a')
    client.provider('b')
    assert _uuids(client.get('/resource_providers?name=a')) == {a['uuid']}
    assert _uuids(client.get(f'/resource_providers?uuid={a["uuid"]}')) == {a['uuid']}
    assert _uuids(client.get('/resource_providers?name=zzz')) == set()


@pytest.mark.parametrize('query', ['uuid=spameggs', 'spam=eggs', 'in_tree=nope'])
def test_bad_filters_are_400(client, query):
    resp = client.get(f'/resource_providers?{query}')
    assert resp.status_int == 400
    assert 'Invalid query string parameters' in error(resp)['detail']


def test_filters_unknown_at_the_microversion_are_400(client):
    assert client.get('/resource_providers?member_of=' + AGG1, mv='1.2').status_int == 400
    assert client.get('/resource_providers?resources=VCPU:1', mv='1.3').status_int == 400
    assert client.get('/resource_providers?required=HW_CPU_X86_SSE',
                      mv='1.17').status_int == 400


def _with_aggregates(client, name, aggs):
    rp = client.provider(name)
    client.put(f'/resource_providers/{rp["uuid"]}/aggregates',
               {'resource_provider_generation': 0, 'aggregates': aggs})
    return rp['uuid']


def test_member_of(client):
    one = _with_aggregates(client, 'one', [AGG1])
    both = _with_aggregates(client, 'both', [AGG1, AGG2])
    two = _with_aggregates(client, 'two', [AGG2])
    none = client.provider('none')['uuid']
    get = lambda q, mv='latest': _uuids(client.get(f'/resource_providers?{q}', mv=mv))  # noqa: E731
    assert get(f'member_of={AGG1}') == {one, both}
    assert get(f'member_of=in:{AGG1},{AGG2}') == {one, both, two}
    assert get(f'member_of={AGG1}&member_of={AGG2}') == {both}
    assert get(f'member_of=!{AGG2}') == {one, none}
    assert get(f'member_of=!in:{AGG1},{AGG2}') == {none}
    assert client.get(f'/resource_providers?member_of={AGG1}&member_of={AGG2}',
                      mv='1.23').status_int == 400
    assert client.get(f'/resource_providers?member_of=!{AGG1}', mv='1.31').status_int == 400
    resp = client.get(f'/resource_providers?member_of={AGG1},{AGG2}')
    assert resp.status_int == 400
    assert client.get('/resource_providers?member_of=in:not-a-uuid').status_int == 400


def test_resources_filter_respects_capacity_and_units(client):
    rp = client.provider('cn1')
    client.put(f'/resource_providers/{rp["uuid"]}/inventories', {
        'resource_provider_generation': 0,
        'inventories': {'VCPU': {'total': 8, 'allocation_ratio': 2.0, 'max_unit': 4},
                        'DISK_GB': {'total': 100, 'reserved': 20, 'step_size': 10}}})
    get = lambda q: _uuids(client.get(f'/resource_providers?resources={q}'))  # noqa: E731
    assert get('VCPU:4') == {rp['uuid']}
    assert get('VCPU:5') == set()              # above max_unit
    assert get('DISK_GB:80') == {rp['uuid']}
    assert get('DISK_GB:81') == set()          # capacity 80, and not a step
    assert get('DISK_GB:15') == set()          # not a multiple of step_size
    assert get('VCPU:2,DISK_GB:10') == {rp['uuid']}
    assert get('MEMORY_MB:1') == set()


@pytest.mark.parametrize('value, message', [
    ('', 'Badly formed resources parameter'),
    ('VCPU', 'Badly formed resources parameter'),
    ('VCPU:x', 'expected positive integer'),
    ('VCPU:0', 'requires amount >= 1'),
    ('NO_SUCH_CLASS:1', 'Invalid resource class in resources parameter'),
])
def test_bad_resources_filter_is_400(client, value, message):
    resp = client.get(f'/resource_providers?resources={value}')
    assert resp.status_int == 400
    assert message in error(resp)['detail']


def _with_traits(client, name, traits):
    rp = client.provider(name)
    client.put(f'/resource_providers/{rp["uuid"]}/traits',
               {'resource_provider_generation': 0, 'traits': traits})
    return rp['uuid']


def test_required_and_forbidden_traits(client):
    sgx = _with_traits(client, 'sgx', ['HW_CPU_X86_SGX', 'STORAGE_DISK_SSD'])
    shared = _with_traits(client, 'shared', ['MISC_SHARES_VIA_AGGREGATE', 'STORAGE_DISK_SSD'])
    plain = _with_traits(client, 'plain', [])
    get = lambda q, mv='latest': _uuids(client.get(f'/resource_providers?required={q}', mv=mv))  # noqa: E731
    assert get('STORAGE_DISK_SSD') == {sgx, shared}
    assert get('HW_CPU_X86_SGX,MISC_SHARES_VIA_AGGREGATE') == set()
    assert get('!STORAGE_DISK_SSD') == {plain}
    assert get('!HW_CPU_X86_SGX,STORAGE_DISK_SSD') == {shared}
    assert get('in:HW_CPU_X86_SGX,MISC_SHARES_VIA_AGGREGATE') == {sgx, shared}
    assert client.get('/resource_providers?required=in:HW_CPU_X86_SGX',
                      mv='1.38').status_int == 400
    assert client.get('/resource_providers?required=!HW_CPU_X86_SGX',
                      mv='1.21').status_int == 400
    resp = client.get('/resource_providers?required=STORAGE_DISK_SSD,BOGUS_TRAIT')
    assert resp.status_int == 400
    assert 'No such trait(s): BOGUS_TRAIT' in error(resp)['detail']
    for bad in ('', 'STORAGE_DISK_SSD,,HW_CPU_X86_SGX'):
        assert client.get(f'/resource_providers?required={bad}').status_int == 400


def test_required_is_repeatable_from_1_39(client):
    both = _with_traits(client, 'both', ['HW_CPU_X86_SGX', 'STORAGE_DISK_SSD'])
    _with_traits(client, 'ssd', ['STORAGE_DISK_SSD'])
    query = '/resource_providers?required=HW_CPU_X86_SGX&required=STORAGE_DISK_SSD'
    assert _uuids(client.get(query)) == {both}
    # before 1.39 the last one wins
    assert len(_uuids(client.get(query, mv='1.38'))) == 2
