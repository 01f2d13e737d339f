"""The compute API's version discovery, microversion negotiation, errors and flavors, in-process.

Answers are validated against tempest's published response schemas; the
range advertised is 2.1 to 2.69 (cellplane_api/microversion.py).
"""
from __future__ import annotations

import importlib

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import flavors as flavor_schemas
from tempest.lib.api_schema.response.compute.v2_1 import (
    flavors_access,
    flavors_extra_specs,
)
from tempest.lib.api_schema.response.compute.v2_1 import versions as version_schemas

from cellplane.objects import flavors
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api'), cells=1, hosts_per_cell=1)
    yield cloud
    cloud.stop()


def test_version_discovery_needs_no_token_and_matches_tempest(api):
    listed = check(version_schemas.list_versions, api.request('GET', '/', token=None))
    assert [(v['id'], v['min_version'], v['version']) for v in listed['versions']] == [
        ('v2.1', '2.1', '2.69')]
    one = check(version_schemas.get_one_version, api.request('GET', '/v2.1', token=None))
    assert (one['version']['id'], one['version']['version']) == ('v2.1', '2.69')


def test_a_request_without_a_token_is_401(api):
    answer = api.request('GET', '/v2.1/flavors', token=None)
    assert answer.status == 401
    assert answer.json['unauthorized']['code'] == 401


@pytest.mark.parametrize('headers, echoed', [
    ({'OpenStack-API-Version': 'compute 2.37'}, '2.37'),
    ({'X-OpenStack-Nova-API-Version': '2.1'}, '2.1'),
    ({'OpenStack-API-Version': 'compute latest'}, '2.69'),
    ({}, '2.1'),
])
def test_the_version_asked_either_way_is_echoed_with_vary(api, headers, echoed):
    answer = api.request('GET', '/v2.1/flavors', headers=headers)
    assert answer.status == 200
    assert answer.headers['OpenStack-API-Version'] == f'compute {echoed}'
    assert answer.headers['X-OpenStack-Nova-API-Version'] == echoed
    assert 'OpenStack-API-Version' in answer.headers['Vary']


@pytest.mark.parametrize('asked', ['2.70', '2.0', '3.0'])
def test_a_version_outside_the_range_is_406(api, asked):
    answer = api.request('GET', '/v2.1/flavors', version=asked)
    assert answer.status == 406, answer.text
    assert answer.json['notAcceptable']['message'] == (
        f'Version {asked} is not supported by the API. Minimum is 2.1 and maximum is 2.69.')
    assert 'OpenStack-API-Version' not in answer.headers


def test_a_malformed_version_is_400(api):
    answer = api.request('GET', '/v2.1/flavors', version='two')
    assert answer.status == 400
    assert 'two' in answer.json['badRequest']['message']


def test_unknown_route_is_404_and_wrong_method_405_with_allow(api):
    assert api.request('GET', '/v2.1/nothing-here/at/all').status == 404
    answer = api.request('PUT', '/v2.1/flavors')
    assert answer.status == 405
    assert answer.headers['Allow'] == 'GET, POST'


def _create(api, flavor_id, **fields):
    body = {'flavor': {'name': flavor_id, 'ram': 512, 'vcpus': 1, 'disk': 5, 'id': flavor_id,
                       **fields}}
    return api.request('POST', '/v2.1/flavors', body, token=ADMIN)


def test_an_admin_creates_a_flavor_every_user_lists_and_shows(api):
    created = check(flavor_schemas.create_update_get_flavor_details,
                    _create(api, 'f-small', ram=1024, vcpus=2, disk=20))['flavor']
    assert (created['id'], created['ram'], created['vcpus'], created['disk']) == (
        'f-small', 1024, 2, 20)
    listed = check(flavor_schemas.list_flavors, api.request('GET', '/v2.1/flavors'))
    assert 'f-small' in [f['id'] for f in listed['flavors']]
    detail = check(flavor_schemas.list_flavors_details,
                   api.request('GET', '/v2.1/flavors/detail'))
    assert {'id': 'f-small', 'ram': 1024} in [
        {'id': f['id'], 'ram': f['ram']} for f in detail['flavors']]
    shown = check(flavor_schemas.create_update_get_flavor_details,
                  api.request('GET', '/v2.1/demo/flavors/f-small'))['flavor']
    assert shown['links'][0]['href'].endswith('/v2.1/demo/flavors/f-small')


def test_a_member_may_not_create_or_delete_a_flavor(api):
    body = {'flavor': {'name': 'mine', 'ram': 512, 'vcpus': 1, 'disk': 1}}
    answer = api.request('POST', '/v2.1/flavors', body)
    assert answer.status == 403
    assert answer.json == {'forbidden': {
        'code': 403, 'message': "Policy doesn't allow os_compute_api:os-flavor-manage:create "
                                "to be performed."}}
    check(flavor_schemas.create_update_get_flavor_details, _create(api, 'f-kept'))
    assert api.request('DELETE', '/v2.1/flavors/f-kept').status == 403
    assert api.request('GET', '/v2.1/flavors/f-kept').status == 200


def test_a_deleted_flavor_is_gone(api):
    check(flavor_schemas.create_update_get_flavor_details, _create(api, 'f-gone'))
    check(flavor_schemas.delete_flavor, api.request('DELETE', '/v2.1/flavors/f-gone',
                                                    token=ADMIN))
    answer = api.request('GET', '/v2.1/flavors/f-gone')
    assert answer.status == 404
    assert answer.json['itemNotFound']['message'] == 'Flavor f-gone could not be found.'


def test_a_second_flavor_with_the_same_id_is_409(api):
    check(flavor_schemas.create_update_get_flavor_details, _create(api, 'f-twice'))
    answer = _create(api, 'f-twice')
    assert answer.status == 409
    assert 'conflictingRequest' in answer.json


@pytest.mark.parametrize('fields, named', [
    ({'ram': 'lots'}, 'flavor.ram'),
    ({'vcpus': 0}, 'flavor.vcpus'),
    ({'colour': 'red'}, 'flavor'),
    ({'os-flavor-access:is_public': 'no'}, 'os-flavor-access:is_public'),
    ({'swap': 512}, 'swap'),
])
def test_a_bad_flavor_body_is_400_naming_the_field_and_nothing_is_written(api, fields, named):
    answer = _create(api, 'f-bad', **fields)
    assert answer.status == 400, answer.text
    message = answer.json['badRequest']['message']
    assert named in message and '\n' not in message
    assert 'f-bad' not in [f.flavorid for f in flavors.list_all(api.services.api_engine)]


def test_malformed_json_and_an_oversized_body_are_refused(api):
    answer = api.request('POST', '/v2.1/flavors', raw=b'{"flavor": ', token=ADMIN)
    assert answer.status == 400
    assert answer.json['badRequest']['message'].startswith('Malformed request body')
    big = b'{"flavor": {"name": "' + b'x' * 200_000 + b'"}}'
    answer = api.request('POST', '/v2.1/flavors', raw=big, token=ADMIN)
    assert answer.status == 413


def test_extra_specs_are_listed_and_shown(api):
    flavors.create(api.services.api_engine, name='f-specs', vcpus=1, memory_mb=256,
                   flavorid='f-specs', extra_specs={'trait:HW_CPU_X86_AVX2': 'required'})
    listed = check(flavors_extra_specs.set_get_flavor_extra_specs,
                   api.request('GET', '/v2.1/flavors/f-specs/os-extra_specs'))
    assert listed == {'extra_specs': {'trait:HW_CPU_X86_AVX2': 'required'}}
    one = check(flavors_extra_specs.set_get_flavor_extra_specs_key, api.request(
        'GET', '/v2.1/flavors/f-specs/os-extra_specs/trait:HW_CPU_X86_AVX2'))
    assert one == {'trait:HW_CPU_X86_AVX2': 'required'}
    assert api.request('GET', '/v2.1/flavors/f-specs/os-extra_specs/nope').status == 404


def test_healthcheck_answers_without_a_token(api):
    answer = api.request('GET', '/healthcheck', token=None)
    assert answer.status == 200


def test_an_admin_sets_changes_and_unsets_extra_specs(api):
    check(flavor_schemas.create_update_get_flavor_details, _create(api, 'f-edit'))
    path = '/v2.1/flavors/f-edit/os-extra_specs'
    set_ = check(flavors_extra_specs.set_get_flavor_extra_specs, api.request(
        'POST', path, {'extra_specs': {'trait:HW_CPU_X86_AVX2': 'required',
                                       'resources:CUSTOM_GPU': 1}}, token=ADMIN))
    assert set_ == {'extra_specs': {'trait:HW_CPU_X86_AVX2': 'required',
                                    'resources:CUSTOM_GPU': '1'}}
    changed = check(flavors_extra_specs.set_get_flavor_extra_specs_key, api.request(
        'PUT', f'{path}/resources:CUSTOM_GPU', {'resources:CUSTOM_GPU': '2'}, token=ADMIN))
    assert changed == {'resources:CUSTOM_GPU': '2'}
    check(flavors_extra_specs.unset_flavor_extra_specs, api.request(
        'DELETE', f'{path}/trait:HW_CPU_X86_AVX2', token=ADMIN))
    # What the scheduler will read: the API database's flavor.
    stored = flavors.get(api.services.api_engine, 'f-edit').extra_specs
    assert stored == {'resources:CUSTOM_GPU': '2'}
    assert api.request('DELETE', f'{path}/trait:HW_CPU_X86_AVX2', token=ADMIN).status == 404


def test_extra_specs_are_checked_and_only_an_admin_writes_them(api):
    check(flavor_schemas.create_update_get_flavor_details, _create(api, 'f-guarded'))
    path = '/v2.1/flavors/f-guarded/os-extra_specs'
    refused = api.request('POST', path, {'extra_specs': {'trait:NO_SUCH_TRAIT': 'required'}},
                          token=ADMIN)
    assert refused.status == 400
    assert 'NO_SUCH_TRAIT' in refused.json['badRequest']['message']
    mismatch = api.request('PUT', f'{path}/a', {'b': '1'}, token=ADMIN)
    assert mismatch.json == {'badRequest': {'code': 400,
                                            'message': 'Request body and URI mismatch'}}
    member = api.request('POST', path, {'extra_specs': {'hw:cpu_policy': 'dedicated'}})
    assert member.status == 403
    assert flavors.get(api.services.api_engine, 'f-guarded').extra_specs == {}


def test_a_private_flavor_is_for_the_projects_given_access(api):
    created = check(flavor_schemas.create_update_get_flavor_details,
                    _create(api, 'f-private', **{'os-flavor-access:is_public': False}))
    assert created['flavor']['os-flavor-access:is_public'] is False
    access = '/v2.1/flavors/f-private/os-flavor-access'
    assert check(flavors_access.add_remove_list_flavor_access,
                 api.request('GET', access, token=ADMIN)) == {'flavor_access': []}

    def seen_by(token):
        listed = check(flavor_schemas.list_flavors, api.request('GET', '/v2.1/flavors',
                                                                token=token))
        return 'f-private' in [f['id'] for f in listed['flavors']]
    assert not seen_by('alice:team-a')
    assert api.request('GET', '/v2.1/flavors/f-private', token='alice:team-a').status == 404
    assert not seen_by(ADMIN)   # an admin lists public ones by default, as in Nova
    everything = api.request('GET', '/v2.1/flavors?is_public=none', token=ADMIN).json
    assert 'f-private' in [f['id'] for f in everything['flavors']]

    added = check(flavors_access.add_remove_list_flavor_access, api.request(
        'POST', '/v2.1/flavors/f-private/action', {'addTenantAccess': {'tenant': 'team-a'}},
        token=ADMIN))
    assert added == {'flavor_access': [{'flavor_id': 'f-private', 'tenant_id': 'team-a'}]}
    assert seen_by('alice:team-a') and not seen_by('bob:team-b')
    again = api.request('POST', '/v2.1/flavors/f-private/action',
                        {'addTenantAccess': {'tenant': 'team-a'}}, token=ADMIN)
    assert again.status == 409 and 'conflictingRequest' in again.json

    removed = check(flavors_access.add_remove_list_flavor_access, api.request(
        'POST', '/v2.1/flavors/f-private/action', {'removeTenantAccess': {'tenant': 'team-a'}},
        token=ADMIN))
    assert removed == {'flavor_access': []}
    assert not seen_by('alice:team-a')


def test_flavor_access_is_for_admins_and_private_flavors(api):
    check(flavor_schemas.create_update_get_flavor_details, _create(api, 'f-open'))
    public = api.request('GET', '/v2.1/flavors/f-open/os-flavor-access', token=ADMIN)
    assert public.status == 404
    assert public.json['itemNotFound']['message'] == 'Access list not available for public flavors.'
    add = api.request('POST', '/v2.1/flavors/f-open/action',
                      {'addTenantAccess': {'tenant': 'team-a'}}, token=ADMIN)
    assert add.status == 409
    member = api.request('POST', '/v2.1/flavors/f-open/action',
                         {'addTenantAccess': {'tenant': 'team-a'}})
    assert member.status == 403
    assert 'os_compute_api:os-flavor-access:add_tenant_access' in member.json['forbidden'][
        'message']
    bad = api.request('POST', '/v2.1/flavors/f-open/action', {'shareWith': 'x'}, token=ADMIN)
    assert bad.status == 400


def _flavor_schemas(version: str):
    return importlib.import_module(
        f'tempest.lib.api_schema.response.compute.v{version.replace(".", "_")}.flavors')


@pytest.mark.parametrize('version', ['2.1', '2.55', '2.61'])
def test_flavors_match_tempests_schema_of_each_version_step(api, version):
    minor = int(version.split('.')[1])
    schemas = _flavor_schemas(version)
    flavor_id = f'f-mv-{minor}'
    body = {'flavor': {'name': flavor_id, 'ram': 512, 'vcpus': 1, 'disk': 5, 'id': flavor_id}}
    if minor >= 55:
        body['flavor']['description'] = 'for tests'
    created = check(schemas.create_update_get_flavor_details, api.request(
        'POST', '/v2.1/flavors', body, token=ADMIN, version=version))['flavor']
    assert created.get('description') == ('for tests' if minor >= 55 else None)
    flavors.set_extra_specs(api.services.api_engine, flavor_id, {'hw:cpu_policy': 'shared'})
    for token in ('demo:demo', ADMIN):
        shown = check(schemas.create_update_get_flavor_details, api.request(
            'GET', f'/v2.1/flavors/{flavor_id}', token=token, version=version))['flavor']
        assert ('description' in shown) == (minor >= 55)
        assert shown.get('extra_specs') == ({'hw:cpu_policy': 'shared'} if minor >= 61
                                            else None)
        listed = check(schemas.list_flavors, api.request('GET', '/v2.1/flavors', token=token,
                                                         version=version))['flavors']
        assert all(('description' in f) == (minor >= 55) for f in listed)
        detail = check(schemas.list_flavors_details, api.request(
            'GET', '/v2.1/flavors/detail', token=token, version=version))['flavors']
        assert all(('extra_specs' in f) == (minor >= 61) for f in detail)


def test_a_flavors_description_is_changed_by_put_from_2_55(api):
    check(flavor_schemas.create_update_get_flavor_details, _create(api, 'f-described'))
    body = {'flavor': {'description': 'now described'}}
    assert api.request('PUT', '/v2.1/flavors/f-described', body, token=ADMIN,
                       version='2.54').status == 404
    assert api.request('PUT', '/v2.1/flavors/f-described', body, version='2.55').status == 403
    updated = check(_flavor_schemas('2.61').create_update_get_flavor_details, api.request(
        'PUT', '/v2.1/flavors/f-described', body, token=ADMIN, version='2.61'))['flavor']
    assert (updated['description'], updated['extra_specs']) == ('now described', {})
    bad = api.request('PUT', '/v2.1/flavors/f-described', {'flavor': {'name': 'renamed'}},
                      token=ADMIN, version='2.55')
    assert bad.status == 400 and 'flavor' in bad.json['badRequest']['message']
    assert api.request('GET', '/v2.1/flavors/f-described', version='2.55').json['flavor'][
        'description'] == 'now described'
    cleared = api.request('PUT', '/v2.1/flavors/f-described', {'flavor': {'description': None}},
                          token=ADMIN, version='2.55')
    assert cleared.json['flavor']['description'] is None


def test_flavor_lists_filter_sort_and_page_as_nova(api):
    for flavor_id, ram in (('f-page-a', 100), ('f-page-b', 200000), ('f-page-c', 300000)):
        check(flavor_schemas.create_update_get_flavor_details,
              _create(api, flavor_id, ram=ram))

    def ids(query):
        answer = api.request('GET', f'/v2.1/flavors/detail?{query}')
        assert answer.status == 200, answer.text
        return [f['id'] for f in answer.json['flavors']], answer.json.get('flavors_links')
    assert ids('minRam=200000')[0] == ['f-page-b', 'f-page-c']
    assert ids('minRam=200000&sort_key=memory_mb&sort_dir=desc')[0] == ['f-page-c', 'f-page-b']
    page, next_links = ids('minRam=200000&limit=1')
    assert page == ['f-page-b'] and 'marker=f-page-b' in next_links[0]['href']
    assert ids('minRam=200000&limit=1&marker=f-page-b') == (['f-page-c'], None)
    for query in ('minRam=lots', 'sort_key=colour', 'marker=no-such-flavor'):
        assert api.request('GET', f'/v2.1/flavors?{query}').status == 400, query
