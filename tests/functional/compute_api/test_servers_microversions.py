"""``/servers`` at every microversion step from 2.1 to 2.63 that tempest has a schema module for.

One cloud and a few servers (an ACTIVE one, a batch of two, one in ERROR)
are booted once; each version then shows, lists and details them as a
member and as an admin, and tempest's schema of that version (which rejects
missing and extra fields) validates every answer. The fields a version adds
are asserted present from it and absent below it. 2.69's partial records
are in test_servers_cell_down.py.
"""
from __future__ import annotations

import importlib
import uuid as uuidlib

import pytest

from cellplane.objects import flavors, request_specs, server_groups, services
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'
PROJECT = 'mv-project'
TOKEN = f'mv-user:{PROJECT}'
# The versions at which tempest (47.0.0) has a servers schema module, up to 2.69.
SCHEMA_VERSIONS = ['2.1', '2.3', '2.6', '2.8', '2.9', '2.16', '2.19', '2.26', '2.45', '2.47',
                   '2.48', '2.51', '2.54', '2.57', '2.58', '2.59', '2.62', '2.63']
# Each field and the version that adds it to a detailed server.
ADDED = {'locked': 9, 'description': 19, 'tags': 26, 'trusted_image_certificates': 63}
ADMIN_ADDED = {'OS-EXT-SRV-ATTR:hostname': 3, 'OS-EXT-SRV-ATTR:launch_index': 3,
               'OS-EXT-SRV-ATTR:reservation_id': 3, 'host_status': 16}


def _schemas(version: str):
    return importlib.import_module(
        f'tempest.lib.api_schema.response.compute.v{version.replace(".", "_")}.servers')


def _minor(version: str) -> int:
    return int(version.split('.')[1])


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    # The huge flavor is meant to reach the scheduler (NoValidHost), not the cores quota.
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api'), cells=1, hosts_per_cell=2,
                         quota={'cores': -1})
    engine = cloud.services.api_engine
    flavors.create(engine, name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small',
                   extra_specs={'hw:cpu_policy': 'shared'})
    flavors.create(engine, name='huge', vcpus=4096, memory_mb=256, root_gb=1, flavorid='huge')
    yield cloud
    cloud.stop()


@pytest.fixture(scope='module')
def booted(api):
    """{"active": id, "batch": [id, id], "error": id}, each in its final state."""
    def boot(name, flavor='small', **fields):
        body = {'server': {'name': name, 'flavorRef': flavor, 'imageRef': 'cirros', **fields}}
        answer = api.request('POST', '/v2.1/servers', body, token=TOKEN)
        assert answer.status == 202, answer.text
        return answer.json['server']['id']
    ids = {'active': boot('web one'), 'error': boot('too-big', 'huge')}
    boot('batch', min_count=2, max_count=2)
    listed = api.request('GET', '/v2.1/servers?name=^batch', token=TOKEN).json['servers']
    ids['batch'] = [s['id'] for s in listed]
    for server_id in [ids['active'], *ids['batch']]:
        api.wait_for_status(server_id, 'ACTIVE', token=TOKEN)
    api.wait_for_status(ids['error'], 'ERROR', token=TOKEN)
    return ids


@pytest.mark.parametrize('version', SCHEMA_VERSIONS)
def test_show_list_and_detail_match_tempests_schema_of_the_version(api, booted, version):
    schemas = _schemas(version)
    minor = _minor(version)
    for token in (TOKEN, ADMIN):
        for server_id in (booted['active'], booted['error']):
            shown = check(schemas.get_server, api.request(
                'GET', f'/v2.1/servers/{server_id}', token=token, version=version))['server']
            for field, since in ADDED.items():
                assert (field in shown) == (minor >= since), (field, version)
            for field, since in ADMIN_ADDED.items():
                assert (field in shown) == (token == ADMIN and minor >= since), (field, version)
            # 2.47: the flavor as a dict, extra specs for who may read them.
            assert ('original_name' in shown['flavor']) == (minor >= 47)
            assert ('links' in shown['flavor']) == (minor < 47)
        query = 'all_tenants=1&' if token == ADMIN else ''
        detail = check(schemas.list_servers_detail, api.request(
            'GET', f'/v2.1/servers/detail?{query}project_id={PROJECT}', token=token,
            version=version))
        assert {s['id'] for s in detail['servers']} == {
            booted['active'], booted['error'], *booted['batch']}
        brief = check(schemas.list_servers, api.request(
            'GET', f'/v2.1/servers?{query}project_id={PROJECT}', token=token, version=version))
        assert len(brief['servers']) == 4


def test_the_values_nova_gives_at_the_latest_version(api, booted):
    shown = api.request('GET', f'/v2.1/servers/{booted["active"]}', token=ADMIN,
                        version='2.69').json['server']
    assert shown['flavor'] == {'vcpus': 1, 'ram': 256, 'disk': 1, 'ephemeral': 0, 'swap': 0,
                               'original_name': 'small',
                               'extra_specs': {'hw:cpu_policy': 'shared'}}
    assert (shown['locked'], shown['tags'], shown['trusted_image_certificates']) == (
        False, [], None)
    # Created at 2.1: Nova's description is then the name.
    assert shown['description'] == 'web one'
    assert shown['OS-EXT-SRV-ATTR:hostname'] == 'web-one'
    assert shown['host_status'] == 'UP'
    assert shown['progress'] == 0
    launch = sorted(api.request('GET', f'/v2.1/servers/{server_id}', token=ADMIN,
                                version='2.3').json['server']['OS-EXT-SRV-ATTR:launch_index']
                    for server_id in booted['batch'])
    assert launch == [0, 1]


def test_a_fault_shows_its_details_to_admins_only(api, booted):
    as_member = api.request('GET', f'/v2.1/servers/{booted["error"]}', token=TOKEN).json
    as_admin = api.request('GET', f'/v2.1/servers/{booted["error"]}', token=ADMIN).json
    assert as_member['server']['fault']['message'] == as_admin['server']['fault']['message']
    assert 'details' not in as_member['server']['fault']
    assert as_admin['server']['fault']['code'] == 500


def test_host_status_is_maintenance_on_a_disabled_host_and_down_on_a_forced_down_one(api):
    token = 'hs-user:hs-project'
    body = {'server': {'name': 'hs', 'flavorRef': 'small'}}
    server_id = api.request('POST', '/v2.1/servers', body, token=token).json['server']['id']
    api.wait_for_status(server_id, 'ACTIVE', token=token)
    shown = api.request('GET', f'/v2.1/servers/{server_id}', token=ADMIN,
                        version='2.16').json['server']
    cell_engine = next(iter(api.cloud.cells.enabled_engines().values()))
    host = shown['OS-EXT-SRV-ATTR:host']
    services.set_disabled(cell_engine, host, 'cellplane-compute', disabled=True,
                          reason='test')
    try:
        again = api.request('GET', f'/v2.1/servers/{server_id}', token=ADMIN,
                            version='2.16').json['server']
        assert (shown['host_status'], again['host_status']) == ('UP', 'MAINTENANCE')
    finally:
        services.set_disabled(cell_engine, host, 'cellplane-compute', disabled=False)
    services.set_forced_down(cell_engine, host, 'cellplane-compute', forced_down=True)
    try:
        down = api.request('GET', f'/v2.1/servers/{server_id}', token=ADMIN,
                           version='2.16').json['server']
        assert down['host_status'] == 'DOWN'
    finally:
        services.set_forced_down(cell_engine, host, 'cellplane-compute', forced_down=False)
    member = api.request('GET', f'/v2.1/servers/{server_id}', token=token,
                         version='2.16').json['server']
    assert 'host_status' not in member


@pytest.mark.parametrize('version', ['2.1', '2.19', '2.37', '2.69'])
def test_create_matches_tempests_schema_and_stores_the_description(api, version):
    schemas = _schemas('2.1')
    token = f'c-user:c-{version}'
    body = {'server': {'name': 'described', 'flavorRef': 'small'}}
    if _minor(version) >= 19:
        body['server']['description'] = 'my web server'
    if _minor(version) >= 37:
        body['server']['networks'] = 'none'
    created = check(schemas.create_server, api.request('POST', '/v2.1/servers', body,
                                                       token=token, version=version))
    assert created['server']['security_groups'] == [{'name': 'default'}]
    server_id = created['server']['id']
    shown = api.request('GET', f'/v2.1/servers/{server_id}', token=token,
                        version='2.69').json['server']
    assert shown['description'] == ('my web server' if _minor(version) >= 19 else 'described')
    spec = request_specs.get(api.services.api_engine, server_id)
    assert spec.requested_networks == ('none' if _minor(version) >= 37 else None)


def test_networks_is_required_from_2_37_and_auto_is_recorded(api):
    token = 'n-user:n-project'
    body = {'server': {'name': 'netless', 'flavorRef': 'small'}}
    missing = api.request('POST', '/v2.1/servers', body, token=token, version='2.37')
    assert missing.status == 400
    assert 'networks' in missing.json['badRequest']['message']
    assert api.request('GET', '/v2.1/servers', token=token).json['servers'] == []
    body['server']['networks'] = 'auto'
    created = api.request('POST', '/v2.1/servers', body, token=token, version='2.37')
    assert created.status == 202, created.text
    spec = request_specs.get(api.services.api_engine, created.json['server']['id'])
    assert spec.requested_networks == 'auto'


@pytest.mark.parametrize('version, server, named', [
    ('2.1', {'description': 'too early'}, 'description'),
    ('2.19', {'description': 'x' * 256}, 'description'),
    ('2.37', {'networks': 'some'}, 'networks'),
    ('2.37', {'networks': [{'uuid': str(uuidlib.uuid4())}]}, 'networks'),
    ('2.52', {'networks': 'auto', 'tags': ['a']}, 'tags'),
    ('2.63', {'networks': 'auto', 'trusted_image_certificates': ['c']},
     'trusted_image_certificates'),
])
def test_a_create_the_version_does_not_take_is_400_naming_the_field(api, version, server,
                                                                     named):
    token = f'bad-user:bad-{uuidlib.uuid4().hex[:6]}'
    body = {'server': {'name': 'refused', 'flavorRef': 'small', **server}}
    answer = api.request('POST', '/v2.1/servers', body, token=token, version=version)
    assert answer.status == 400, answer.text
    assert named in answer.json['badRequest']['message']
    assert api.request('GET', '/v2.1/servers', token=token).json['servers'] == []


def test_list_filters_of_later_versions(api, booted):
    def ids(query, version):
        answer = api.request('GET', f'/v2.1/servers?{query}', token=TOKEN, version=version)
        assert answer.status == 200, answer.text
        return {s['id'] for s in answer.json['servers']}
    everyone = {booted['active'], booted['error'], *booted['batch']}
    # 2.26: no cellplane server has tags.
    assert ids('tags=web', '2.26') == set()
    assert ids('not-tags=web', '2.26') == everyone
    # An unknown status: no server below 2.38, a 400 from it.
    assert ids('status=NOT_A_STATUS', '2.37') == set()
    answer = api.request('GET', '/v2.1/servers?status=NOT_A_STATUS', token=TOKEN,
                         version='2.38')
    assert answer.json == {'badRequest': {'code': 400, 'message': 'Invalid status value'}}
    # 2.66: changes-before, not before changes-since.
    assert ids('changes-before=2000-01-01T00:00:00Z', '2.66') == set()
    assert ids('changes-before=2999-01-01T00:00:00Z', '2.66') == everyone
    bad = api.request('GET', '/v2.1/servers?changes-since=2001-01-01T00:00:00Z'
                             '&changes-before=2000-01-01T00:00:00Z', token=TOKEN, version='2.66')
    assert bad.status == 400 and 'changes-before' in bad.json['badRequest']['message']
    # Listing deleted servers by status is for admins.
    assert api.request('GET', '/v2.1/servers?status=DELETED', token=TOKEN).status == 403


def test_lists_sort_by_the_keys_asked_and_filter_as_nova(api, booted):
    def names(query, token=TOKEN):
        answer = api.request('GET', f'/v2.1/servers?{query}', token=token)
        assert answer.status == 200, answer.text
        return [s['name'] for s in answer.json['servers']]
    assert names('sort_key=display_name&sort_dir=asc') == [
        'batch-1', 'batch-2', 'too-big', 'web one']
    # No direction: descending, as Nova's default.
    assert names('sort_key=display_name') == ['web one', 'too-big', 'batch-2', 'batch-1']
    # A key Nova ignores leaves its default order; one it does not know is a 400.
    assert names('sort_key=vcpus') == names('')
    assert api.request('GET', '/v2.1/servers?sort_key=colour', token=TOKEN).status == 400
    assert api.request('GET', '/v2.1/servers?sort_key=name&sort_dir=up',
                       token=TOKEN).status == 400
    assert sorted(names('flavor=huge')) == ['too-big']
    assert len(names('image=cirros')) == 4 and names('image=other') == []
    # No cellplane server has an address.
    assert names('ip=10.0.0.1') == []
    # Admin filters: ignored for a member, applied for an admin.
    user = api.request('GET', f'/v2.1/servers/{booted["active"]}', token=TOKEN).json[
        'server']['user_id']
    assert len(names('user_id=nobody')) == 4
    assert names(f'all_tenants=1&project_id={PROJECT}&user_id=nobody', ADMIN) == []
    assert len(names(f'all_tenants=1&project_id={PROJECT}&user_id={user}', ADMIN)) == 4


def test_a_create_shaped_as_openstacksdk_sends_it_boots_into_the_group(api):
    """openstacksdk 2.69: hints under Nova's other name, networks "auto", counts as integers."""
    project, token = 'sdk-project', 'sdk-user:sdk-project'
    group = server_groups.create(api.services.api_engine, project_id=project,
                                 user_id='sdk-user', name='g', policy='anti-affinity')
    body = {'server': {'name': 'sdk', 'imageRef': 'cirros', 'flavorRef': 'small',
                       'min_count': 1, 'max_count': 1, 'networks': 'auto'},
            'OS-SCH-HNT:scheduler_hints': {'group': group.uuid}}
    created = check(_schemas('2.1').create_server, api.request(
        'POST', '/v2.1/servers', body, token=token, version='2.69'))['server']
    assert list(server_groups.get(api.services.api_engine, group.uuid).members) == [created['id']]
    # Its request spec keeps the image and the networks asked, as Nova's does.
    spec = request_specs.get(api.services.api_engine, created['id'])
    assert (spec.image_ref, spec.requested_networks) == ('cirros', 'auto')
    check(_schemas('2.63').get_server, api.request(
        'GET', f'/v2.1/servers/{created["id"]}', token=token, version='2.63'))
