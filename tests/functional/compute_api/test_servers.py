"""``/servers`` through the compute API, in-process over the embedded control plane.

Servers are really scheduled and built (fake driver) by the services the
daemons run; every answer is validated against tempest's 2.1 response
schemas. Each test uses its own project, so they share one cloud.
"""
from __future__ import annotations

import datetime
import uuid as uuidlib

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import servers as schemas

from cellplane.objects import aggregates, build_requests, flavors, instance_mappings, server_groups
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    # The huge flavor is meant to reach the scheduler (NoValidHost), not the cores quota.
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api'), cells=2, hosts_per_cell=2,
                         quota={'cores': -1})
    engine = cloud.services.api_engine
    flavors.create(engine, name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')
    flavors.create(engine, name='huge', vcpus=4096, memory_mb=256, root_gb=1, flavorid='huge')
    yield cloud
    cloud.stop()


@pytest.fixture
def project():
    """A project of its own for the test: ``token`` is its member's noauth2 token."""
    name = f'p-{uuidlib.uuid4().hex[:8]}'
    return name, f'{name}-user:{name}'


def _boot(api, token, name='web', *, hints=None, **fields):
    body = {'server': {'name': name, 'flavorRef': 'small', 'imageRef': 'cirros', **fields}}
    if hints is not None:
        body['os:scheduler_hints'] = hints
    return api.request('POST', '/v2.1/servers', body, token=token)


def _written(api) -> int:
    """Instances the API database knows of (mapped), whatever their state."""
    return len(instance_mappings.cells_of(api.services.api_engine, None))


def test_a_member_boots_a_server_that_becomes_active_on_a_real_host(api, project):
    name, token = project
    created = check(schemas.create_server, _boot(api, token))['server']
    active = api.wait_for_status(created['id'], 'ACTIVE', token=token)
    shown = check(schemas.get_server, api.request('GET', f'/v2.1/servers/{created["id"]}',
                                                  token=token))['server']
    assert shown == {**active, 'updated': shown['updated']}
    assert (shown['tenant_id'], shown['user_id'], shown['flavor']['id']) == (
        name, f'{name}-user', 'small')
    # Nova's instances start at progress 0; only migrations and snapshots move it.
    assert shown['OS-EXT-STS:vm_state'] == 'active' and shown['progress'] == 0
    # The imageRef asked for is stored with the instance in its cell and shown.
    assert shown['image'] == {'id': 'cirros', 'links': [
        {'rel': 'bookmark', 'href': 'http://localhost/images/cirros'}]}
    # A member is not shown the host; an admin is, and it is one of the cloud's.
    assert 'OS-EXT-SRV-ATTR:host' not in shown
    as_admin = check(schemas.get_server, api.request(
        'GET', f'/v2.1/servers/{created["id"]}', token=ADMIN))['server']
    assert as_admin['OS-EXT-SRV-ATTR:host'] in api.cloud.computes


def test_max_count_boots_that_many_named_as_nova_names_them(api, project):
    _, token = project
    check(schemas.create_server, _boot(api, token, 'batch', min_count=2, max_count=3))
    listed = check(schemas.list_servers, api.request('GET', '/v2.1/servers', token=token))
    assert sorted(s['name'] for s in listed['servers']) == ['batch-1', 'batch-2', 'batch-3']


@pytest.mark.parametrize('fields, hints, named', [
    ({'min_count': 3, 'max_count': 2}, None, 'min_count'),
    ({'flavorRef': 'no-such-flavor'}, None, 'flavorRef'),
    ({'availability_zone': 'no-such-zone'}, None, 'availability_zone'),
    ({}, {'group': str(uuidlib.uuid4())}, 'group'),
    ({}, {'same_host': str(uuidlib.uuid4())}, 'os:scheduler_hints'),
    ({}, {'near_the_window': 'yes'}, 'os:scheduler_hints'),
    ({'name': ''}, None, 'server.name'),
    ({'key_name': 'mine'}, None, 'server'),
])
def test_a_bad_create_is_400_naming_the_field_and_writes_nothing(api, project, fields,
                                                                 hints, named):
    _, token = project
    before = _written(api)
    answer = _boot(api, token, hints=hints, **fields)
    assert answer.status == 400, answer.text
    message = answer.json['badRequest']['message']
    assert named in message and '\n' not in message, message
    assert _written(api) == before


def test_malformed_json_is_400(api, project):
    answer = api.request('POST', '/v2.1/servers', raw=b'{"server": {', token=project[1])
    assert answer.status == 400
    assert 'badRequest' in answer.json


def test_a_server_no_host_can_take_is_error_with_the_reason_as_fault(api, project):
    _, token = project
    created = _boot(api, token, 'too-big', flavorRef='huge').json['server']
    failed = api.wait_for_status(created['id'], 'ERROR', token=token)
    check(schemas.get_server, api.request('GET', f'/v2.1/servers/{created["id"]}', token=token))
    assert failed['fault']['code'] == 500
    assert failed['fault']['message'].startswith(f'NoValidHost: No valid host for instance '
                                                 f'{created["id"]}')
    assert 'VCPU:4096' in failed['fault']['message']


def test_another_projects_server_is_404_to_show_and_delete_and_unlisted(api, project):
    _, token = project
    server_id = _boot(api, token, 'private').json['server']['id']
    api.wait_for_status(server_id, 'ACTIVE', token=token)
    stranger = 'someone:elsewhere'
    for method in ('GET', 'DELETE'):
        answer = api.request(method, f'/v2.1/servers/{server_id}', token=stranger)
        assert answer.status == 404
        assert answer.json == {'itemNotFound': {
            'code': 404, 'message': f'Instance {server_id} could not be found.'}}
    listed = api.request('GET', '/v2.1/servers/detail', token=stranger).json['servers']
    assert server_id not in [s['id'] for s in listed]
    assert api.wait_for_status(server_id, 'ACTIVE', token=token)


def test_all_tenants_is_for_admins(api, project):
    name, token = project
    server_id = _boot(api, token, 'mine').json['server']['id']
    answer = api.request('GET', '/v2.1/servers?all_tenants=1', token=token)
    assert answer.status == 403
    assert 'os_compute_api:servers:index:get_all_tenants' in answer.json['forbidden']['message']
    everyone = check(schemas.list_servers_detail, api.request(
        'GET', f'/v2.1/servers/detail?all_tenants=1&project_id={name}', token=ADMIN))
    assert [s['id'] for s in everyone['servers']] == [server_id]
    # Without all_tenants an admin sees its own project's only.
    own = api.request('GET', '/v2.1/servers', token=ADMIN).json['servers']
    assert server_id not in [s['id'] for s in own]


def test_lists_are_newest_first_and_paged_with_limit_and_marker(api, project):
    _, token = project
    ids = []
    for n in range(3):
        ids.append(_boot(api, token, f'page-{n}').json['server']['id'])
    first = check(schemas.list_servers_detail, api.request(
        'GET', '/v2.1/servers/detail?limit=2', token=token))
    assert [s['name'] for s in first['servers']] == ['page-2', 'page-1']
    next_link = first['servers_links'][0]['href']
    assert f'marker={ids[1]}' in next_link
    rest = check(schemas.list_servers, api.request(
        'GET', f'/v2.1/servers?limit=2&marker={ids[1]}', token=token))
    assert [s['name'] for s in rest['servers']] == ['page-0']
    assert 'servers_links' not in rest
    bad = api.request('GET', f'/v2.1/servers?marker={uuidlib.uuid4()}', token=token)
    assert bad.status == 400 and 'marker' in bad.json['badRequest']['message']
    assert api.request('GET', '/v2.1/servers?limit=-1', token=token).status == 400


def test_filters_name_status_host_and_changes_since(api, project):
    _, token = project
    web = _boot(api, token, 'web-a').json['server']['id']
    db = _boot(api, token, 'db-a').json['server']['id']
    broken = _boot(api, token, 'web-broken', flavorRef='huge').json['server']['id']
    api.wait_for_status(web, 'ACTIVE', token=token)
    api.wait_for_status(db, 'ACTIVE', token=token)
    api.wait_for_status(broken, 'ERROR', token=token)

    def names(query, as_token=token):
        answer = api.request('GET', f'/v2.1/servers/detail?{query}', token=as_token)
        return sorted(s['name'] for s in check(schemas.list_servers_detail, answer)['servers'])
    assert names('name=^web') == ['web-a', 'web-broken']
    assert names('status=ERROR') == ['web-broken']
    assert names('status=active') == ['db-a', 'web-a']
    host = api.request('GET', f'/v2.1/servers/{web}', token=ADMIN).json['server'][
        'OS-EXT-SRV-ATTR:host']
    project_id = project[0]
    on_host = names(f'all_tenants=1&project_id={project_id}&host={host}', ADMIN)
    assert 'web-a' in on_host and 'web-broken' not in on_host
    future = (datetime.datetime.now(datetime.timezone.utc)
              + datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%SZ')
    assert names(f'changes-since={future}') == []
    assert names('changes-since=2000-01-01T00:00:00Z') == ['db-a', 'web-a', 'web-broken']
    assert api.request('GET', '/v2.1/servers?changes-since=yesterday',
                       token=token).status == 400


def test_different_host_hint_places_apart(api, project):
    _, token = project
    first = _boot(api, token, 'one').json['server']['id']
    api.wait_for_status(first, 'ACTIVE', token=token)
    second = check(schemas.create_server, _boot(api, token, 'two',
                                                hints={'different_host': [first]}))['server']
    api.wait_for_status(second['id'], 'ACTIVE', token=token)
    hosts = [api.request('GET', f'/v2.1/servers/{uuid}', token=ADMIN).json['server'][
        'OS-EXT-SRV-ATTR:host'] for uuid in (first, second['id'])]
    assert hosts[0] != hosts[1]


def test_delete_is_204_and_the_server_goes(api, project):
    _, token = project
    server_id = _boot(api, token, 'short-lived').json['server']['id']
    api.wait_for_status(server_id, 'ACTIVE', token=token)
    check(schemas.delete_server, api.request('DELETE', f'/v2.1/servers/{server_id}',
                                             token=token))
    # As with Nova, the server is listed until its host has deleted it.
    api.wait_until(lambda: api.request('GET', f'/v2.1/servers/{server_id}',
                                       token=token).status == 404, 'the server gone')
    listed = api.request('GET', '/v2.1/servers', token=token).json['servers']
    assert server_id not in [s['id'] for s in listed]


def test_a_server_never_placed_is_deleted_from_its_build_request(api, project):
    _, token = project
    server_id = _boot(api, token, 'unplaceable', flavorRef='huge').json['server']['id']
    api.wait_for_status(server_id, 'ERROR', token=token)
    assert api.request('DELETE', f'/v2.1/servers/{server_id}', token=token).status == 204
    assert server_id not in build_requests.get_many(api.services.api_engine, [server_id])


def test_the_project_id_prefix_form_serves_the_same_routes(api, project):
    name, token = project
    answer = api.request('POST', f'/v2.1/{name}/servers',
                         {'server': {'name': 'prefixed', 'flavorRef': 'small'}}, token=token)
    created = check(schemas.create_server, answer)['server']
    assert created['links'][0]['href'].endswith(f'/v2.1/{name}/servers/{created["id"]}')
    shown = api.request('GET', f'/v2.1/{name}/servers/{created["id"]}', token=token)
    assert check(schemas.get_server, shown)['server']['name'] == 'prefixed'


def test_a_private_flavor_boots_only_for_a_project_given_access(api, project):
    name, token = project
    flavors.create(api.services.api_engine, name=f'private-{name}', vcpus=1, memory_mb=128,
                   flavorid=f'private-{name}', is_public=False)
    before = _written(api)
    refused = _boot(api, token, 'secret', flavorRef=f'private-{name}')
    assert refused.status == 400
    assert 'flavorRef' in refused.json['badRequest']['message']
    assert _written(api) == before
    flavors.add_access(api.services.api_engine, f'private-{name}', name)
    check(schemas.create_server, _boot(api, token, 'secret', flavorRef=f'private-{name}'))


def test_changes_since_lists_servers_deleted_since_then_as_nova_does(api, project):
    _, token = project
    kept = _boot(api, token, 'kept').json['server']['id']
    gone = _boot(api, token, 'gone').json['server']['id']
    api.wait_for_status(kept, 'ACTIVE', token=token)
    api.wait_for_status(gone, 'ACTIVE', token=token)
    assert api.request('DELETE', f'/v2.1/servers/{gone}', token=token).status == 204
    api.wait_until(lambda: api.request('GET', f'/v2.1/servers/{gone}', token=token).status
                   == 404, 'the server gone')
    assert [s['id'] for s in api.request('GET', '/v2.1/servers/detail',
                                         token=token).json['servers']] == [kept]
    since = check(schemas.list_servers_detail, api.request(
        'GET', '/v2.1/servers/detail?changes-since=2000-01-01T00:00:00Z', token=token))
    assert {s['id']: s['status'] for s in since['servers']} == {kept: 'ACTIVE',
                                                                gone: 'DELETED'}


def test_an_availability_zone_places_the_server_on_a_host_in_it(api, project):
    _, token = project
    engine = api.services.api_engine
    aggregates.create(engine, 'zone-b-hosts', zone='zone-b')
    aggregates.add_host(engine, 'zone-b-hosts', 'cell2-host1')
    api.cloud.refresher.refresh()   # the scheduler reads the zone now, not at its next tick
    server_id = check(schemas.create_server, _boot(api, token, 'zoned',
                                                   availability_zone='zone-b'))['server']['id']
    shown = api.wait_for_status(server_id, 'ACTIVE', token=token)
    assert shown['OS-EXT-AZ:availability_zone'] == 'zone-b'
    assert api.request('GET', f'/v2.1/servers/{server_id}', token=ADMIN).json['server'][
        'OS-EXT-SRV-ATTR:host'] == 'cell2-host1'


def test_a_group_hint_makes_members_and_anti_affinity_spreads_them(api, project):
    name, token = project
    group = server_groups.create(api.services.api_engine, project_id=name,
                                 user_id=f'{name}-user', name='spread',
                                 policy='anti-affinity')
    ids = [check(schemas.create_server, _boot(api, token, f'member-{n}',
                                              hints={'group': group.uuid}))['server']['id']
           for n in range(2)]
    hosts = set()
    for server_id in ids:
        api.wait_for_status(server_id, 'ACTIVE', token=token)
        hosts.add(api.request('GET', f'/v2.1/servers/{server_id}', token=ADMIN).json[
            'server']['OS-EXT-SRV-ATTR:host'])
    assert len(hosts) == 2
    assert sorted(server_groups.get(api.services.api_engine, group.uuid).members) == sorted(ids)


def test_another_projects_group_is_refused_naming_the_hint(api, project):
    _, token = project
    theirs = server_groups.create(api.services.api_engine, project_id='someone-else',
                                  user_id='them', name='theirs', policy='affinity')
    before = _written(api)
    answer = _boot(api, token, 'intruder', hints={'group': theirs.uuid})
    assert answer.status == 400
    assert 'os:scheduler_hints.group' in answer.json['badRequest']['message']
    assert _written(api) == before


def test_same_host_hint_places_beside_the_server_named(api, project):
    _, token = project
    first = _boot(api, token, 'anchor').json['server']['id']
    api.wait_for_status(first, 'ACTIVE', token=token)
    second = _boot(api, token, 'beside', hints={'same_host': first}).json['server']['id']
    api.wait_for_status(second, 'ACTIVE', token=token)
    hosts = {api.request('GET', f'/v2.1/servers/{uuid}', token=ADMIN).json['server'][
        'OS-EXT-SRV-ATTR:host'] for uuid in (first, second)}
    assert len(hosts) == 1
