"""Quotas through the compute API: ``os-quota-sets``, ``limits``, and servers refused over quota.

In-process over the embedded control plane with Nova's ``[quota]``
defaults; usage is counted from its real Placement and API database.
Answers are validated against tempest's schemas at the versions where they
change (2.1, 2.36, 2.57; ``limits`` also 2.39). Each test uses its own
project, so they share one cloud.
"""
from __future__ import annotations

import copy
import uuid as uuidlib

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import limits as limits_2_1
from tempest.lib.api_schema.response.compute.v2_1 import quotas as quotas_2_1
from tempest.lib.api_schema.response.compute.v2_36 import limits as limits_2_36
from tempest.lib.api_schema.response.compute.v2_36 import quotas as quotas_2_36
from tempest.lib.api_schema.response.compute.v2_39 import limits as limits_2_39
from tempest.lib.api_schema.response.compute.v2_57 import limits as limits_2_57

from cellplane.objects import (
    build_request_leases,
    build_requests,
    flavors,
    instance_mappings,
    server_groups,
)
from cellplane_api import server_groups as group_views
from cellplane_api import servers
from cellplane_api.quotas import QuotaExceeded
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'
INJECTED = ('injected_files', 'injected_file_content_bytes', 'injected_file_path_bytes')


def _without(schema: dict, fields) -> dict:
    """tempest has no 2.57 quota-set schema: its 2.36 one less the fields Nova drops at 2.57."""
    schema = copy.deepcopy(schema)
    quota_set = schema['response_body']['properties']['quota_set']
    for field in fields:
        quota_set['properties'].pop(field)
        if field in quota_set.get('required', []):
            quota_set['required'].remove(field)
    return schema


QUOTA_SCHEMAS = {
    '2.1': (quotas_2_1.get_quota_set, quotas_2_1.update_quota_set,
            quotas_2_1.get_quota_set_details),
    '2.36': (quotas_2_36.get_quota_set, quotas_2_36.update_quota_set,
             quotas_2_36.get_quota_set_details),
    '2.57': (_without(quotas_2_36.get_quota_set, INJECTED),
             _without(quotas_2_36.update_quota_set, INJECTED),
             _without(quotas_2_36.get_quota_set_details, INJECTED)),
}
LIMIT_SCHEMAS = {'2.1': limits_2_1.get_limit, '2.36': limits_2_36.get_limit,
                 '2.39': limits_2_39.get_limit, '2.57': limits_2_57.get_limit,
                 '2.69': limits_2_57.get_limit}


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api-quotas'), cells=1,
                         hosts_per_cell=2)
    engine = cloud.services.api_engine
    flavors.create(engine, name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')
    flavors.create(engine, name='four', vcpus=4, memory_mb=1024, root_gb=1, flavorid='four')
    yield cloud
    cloud.stop()


@pytest.fixture
def project():
    """A project of its own for the test: its name and its member's noauth2 token."""
    name = f'q-{uuidlib.uuid4().hex[:8]}'
    return name, f'{name}-user:{name}'


def _boot(api, token, name='web', **fields):
    return api.request('POST', '/v2.1/servers', {'server': {
        'name': name, 'flavorRef': 'small', 'imageRef': 'cirros', **fields}}, token=token)


def _set(api, project_name, version='2.1', **limits):
    return api.request('PUT', f'/v2.1/os-quota-sets/{project_name}',
                       {'quota_set': limits}, token=ADMIN, version=version)


def _mapped(api, project_name) -> int:
    with api.services.api_engine.connect() as conn:
        return instance_mappings.count_of_project(conn, project_name)


@pytest.mark.parametrize('version', ['2.1', '2.36', '2.57'])
def test_quota_sets_show_defaults_update_and_detail_match_tempest_at_each_version(
        api, project, version):
    name, token = project
    show, update, detail = QUOTA_SCHEMAS[version]
    shown = check(show, api.request('GET', f'/v2.1/os-quota-sets/{name}', token=token,
                                    version=version))['quota_set']
    assert shown['id'] == name
    assert (shown['instances'], shown['cores'], shown['ram'], shown['server_groups'],
            shown['server_group_members']) == (10, 20, 51200, 10, 10)
    assert ('floating_ips' in shown) == (version == '2.1')
    assert ('injected_files' in shown) == (version != '2.57')
    defaults = check(show, api.request('GET', f'/v2.1/os-quota-sets/{name}/defaults',
                                       token=token, version=version))['quota_set']
    assert defaults == shown
    updated = check(update, _set(api, name, version, instances=3, cores=-1))['quota_set']
    assert (updated['instances'], updated['cores'], updated['ram']) == (3, -1, 51200)
    booted = _boot(api, token, 'one')
    assert booted.status == 202
    # Counted once placed (while claimed, from its flavor and Placement both).
    api.wait_for_status(booted.json['server']['id'], 'ACTIVE', token=token)
    details = check(detail, api.request('GET', f'/v2.1/os-quota-sets/{name}/detail',
                                        token=token, version=version))['quota_set']
    assert details['instances'] == {'limit': 3, 'in_use': 1, 'reserved': 0}
    assert details['cores'] == {'limit': -1, 'in_use': 1, 'reserved': 0}
    assert details['ram'] == {'limit': 51200, 'in_use': 256, 'reserved': 0}


def test_a_field_nova_dropped_at_a_version_is_refused_there(api, project):
    name, _ = project
    assert _set(api, name, '2.1', floating_ips=5).status == 200
    refused = _set(api, name, '2.36', floating_ips=5)
    assert refused.status == 400 and 'floating_ips' in refused.json['badRequest']['message']
    refused = _set(api, name, '2.57', injected_files=1)
    assert refused.status == 400 and 'injected_files' in refused.json['badRequest']['message']


def test_only_an_admin_updates_and_a_project_reads_only_its_own(api, project):
    name, token = project
    answer = api.request('PUT', f'/v2.1/os-quota-sets/{name}',
                         {'quota_set': {'instances': 50}}, token=token)
    assert answer.status == 403
    assert 'os_compute_api:os-quota-sets:update' in answer.json['forbidden']['message']
    other = api.request('GET', '/v2.1/os-quota-sets/someone-else', token=token)
    assert other.status == 403
    assert api.request('GET', '/v2.1/os-quota-sets/someone-else', token=ADMIN).status == 200
    # Anyone may read the defaults.
    assert api.request('GET', '/v2.1/os-quota-sets/someone-else/defaults',
                       token=token).status == 200


def test_a_limit_below_usage_is_refused_unless_forced_and_delete_reverts_to_defaults(
        api, project):
    name, token = project
    for n in range(2):
        assert _boot(api, token, f'w{n}').status == 202
    refused = _set(api, name, instances=1)
    assert refused.status == 400
    assert refused.json['badRequest']['message'] == (
        'Quota limit 1 for instances must be greater than or equal to already used and '
        'reserved 2.')
    assert _set(api, name, instances=1, force=True).json['quota_set']['instances'] == 1
    assert api.request('DELETE', f'/v2.1/os-quota-sets/{name}', token=ADMIN).status == 202
    shown = api.request('GET', f'/v2.1/os-quota-sets/{name}', token=token).json['quota_set']
    assert shown['instances'] == 10


@pytest.mark.parametrize('body', [
    {'quota_set': {'instances': -2}}, {'quota_set': {'instances': 'ten'}},
    {'quota_set': {'nonsense': 1}}, {'quota_set': []}, {'quota': {'instances': 1}},
    {'quota_set': {'instances': 1, 'force': 'maybe'}},
])
def test_bad_update_bodies_are_400_and_change_nothing(api, project, body):
    name, _ = project
    answer = api.request('PUT', f'/v2.1/os-quota-sets/{name}', body, token=ADMIN)
    assert answer.status == 400, answer.text
    assert 'badRequest' in answer.json
    assert api.services.quotas.limits(name) == api.services.quotas.defaults()


def test_user_quotas_are_refused_naming_user_id(api, project):
    name, token = project
    answer = api.request('GET', f'/v2.1/os-quota-sets/{name}?user_id=u1', token=token)
    assert answer.status == 400 and 'user_id' in answer.json['badRequest']['message']


def test_over_the_instances_quota_is_novas_403_and_nothing_is_written(api, project):
    name, token = project
    _set(api, name, instances=10)
    assert _boot(api, token, 'many', min_count=9, max_count=9).status == 202
    before = len(build_requests.list_all(api.services.api_engine))
    refused = _boot(api, token, 'more', min_count=3, max_count=3)
    assert refused.status == 403
    assert refused.json == {'forbidden': {'code': 403, 'message': (
        'Quota exceeded for instances: Requested 3, but already used 9 of 10 instances')}}
    assert _mapped(api, name) == 9
    assert len(build_requests.list_all(api.services.api_engine)) <= before


def test_cores_and_ram_count_placed_servers_from_placement(api, project):
    name, token = project
    first = _boot(api, token, 'big', flavorRef='four').json['server']['id']
    api.wait_for_status(first, 'ACTIVE', token=token)
    # 4 VCPUs in Placement now; 4 x 5 = 20 would pass 20 with those.
    refused = _boot(api, token, 'bigger', flavorRef='four', max_count=5, min_count=5)
    assert refused.status == 403
    assert refused.json['forbidden']['message'] == (
        'Quota exceeded for cores: Requested 20, but already used 4 of 20 cores')
    assert _mapped(api, name) == 1


def test_min_count_below_max_count_makes_as_many_as_fit_as_nova_does(api, project):
    name, token = project
    _set(api, name, instances=4)
    assert _boot(api, token, 'batch', min_count=2, max_count=6).status == 202
    assert _mapped(api, name) == 4
    refused = _boot(api, token, 'none-left', min_count=1, max_count=2)
    assert refused.status == 403
    assert refused.json['forbidden']['message'] == (
        'Quota exceeded for instances: Requested 1-2, but already used 4 of 4 instances')


def test_server_group_members_are_checked_with_the_servers(api, project):
    name, token = project
    _set(api, name, server_group_members=2)
    group = server_groups.create(api.services.api_engine, project_id=name, user_id=None,
                                 name='g', policy='soft-anti-affinity')
    hints = {'group': group.uuid}
    body = {'server': {'name': 'member', 'flavorRef': 'small', 'min_count': 2,
                       'max_count': 2}, 'os:scheduler_hints': hints}
    assert api.request('POST', '/v2.1/servers', body, token=token).status == 202
    body['server']['min_count'] = body['server']['max_count'] = 1
    refused = api.request('POST', '/v2.1/servers', body, token=token)
    assert refused.status == 403
    assert refused.json['forbidden']['message'] == 'Quota exceeded, too many servers in group'
    assert len(server_groups.get(api.services.api_engine, group.uuid).members) == 2


def test_server_group_creates_stop_at_the_quota(api, project):
    """The driver is the server groups' quota seam, over HTTP and in ``server_groups.create`` (the CLI's door)."""
    name, token = project
    _set(api, name, server_groups=2)
    assert api.services.group_quota is api.services.quotas
    for n in range(2):
        made = api.request('POST', '/v2.1/os-server-groups',
                           {'server_group': {'name': f'g{n}', 'policies': ['affinity']}},
                           token=token)
        assert made.status == 200, made.text
    refused = api.request('POST', '/v2.1/os-server-groups',
                          {'server_group': {'name': 'g2', 'policies': ['affinity']}}, token=token)
    assert refused.status == 403
    assert refused.json == {'forbidden': {'code': 403, 'message':
                                          'Quota exceeded, too many server groups.'}}
    with pytest.raises(QuotaExceeded) as over:
        group_views.create(api.services.api_engine, project_id=name, user_id=None,
                           name='g3', policy='affinity', quota=api.services.quotas)
    assert str(over.value) == 'Quota exceeded, too many server groups.'
    assert [g.name for g in server_groups.list_all(api.services.api_engine,
                                                   project_id=name)] == ['g0', 'g1']


@pytest.mark.parametrize('version', sorted(LIMIT_SCHEMAS))
def test_limits_show_the_projects_limits_and_usage_as_tempest_expects(api, project, version):
    name, token = project
    _set(api, name, instances=7)
    server = _boot(api, token, 'l', flavorRef='four').json['server']['id']
    api.wait_for_status(server, 'ACTIVE', token=token)
    absolute = check(LIMIT_SCHEMAS[version], api.request(
        'GET', '/v2.1/limits', token=token, version=version))['limits']['absolute']
    assert (absolute['maxTotalInstances'], absolute['totalInstancesUsed']) == (7, 1)
    assert (absolute['maxTotalCores'], absolute['totalCoresUsed']) == (20, 4)
    assert (absolute['maxTotalRAMSize'], absolute['totalRAMUsed']) == (51200, 1024)
    assert (absolute['maxServerGroups'], absolute['maxServerGroupMembers']) == (10, 10)
    assert ('maxTotalFloatingIps' in absolute) == (version == '2.1')
    assert ('maxImageMeta' in absolute) == (version in ('2.1', '2.36'))
    assert ('maxPersonality' in absolute) == (version in ('2.1', '2.36', '2.39'))


def test_limits_of_another_project_are_for_admins(api, project):
    name, token = project
    _set(api, name, instances=4)
    refused = api.request('GET', '/v2.1/limits?tenant_id=other', token=token)
    assert refused.status == 403
    absolute = api.request('GET', f'/v2.1/limits?tenant_id={name}',
                           token=ADMIN).json['limits']['absolute']
    assert absolute['maxTotalInstances'] == 4


def test_build_requests_not_placed_count_their_flavor_until_placement_holds_them(api, project):
    name, _ = project
    engine = api.services.api_engine
    flavor = servers.flavor_payload(flavors.get(engine, 'four'))
    asked = [Instance(uuid=str(uuidlib.uuid4()), project_id=name, user_id='u', flavor=flavor,
                      display_name=f'pending-{n}') for n in range(2)]
    # Written, never cast: no super conductor leases or claims them.
    build_requests.record(engine, asked, RequestSpec(flavor=flavor, project_id=name,
                                                     user_id='u', num_instances=2))
    used = api.services.quotas.usage(name)
    assert (used.instances, used.cores, used.ram) == (2, 8, 2048)
    # One claimed in Placement under a super conductor's lease is counted there, once.
    api.cloud.placement.claim(asked[0].uuid, {_a_provider(api): {'VCPU': 4, 'MEMORY_MB': 1024}},
                              project_id=name, user_id='u')
    build_request_leases.lease_and_read(engine, [asked[0].uuid],
                                        build_requests.Lease('test', 'token'))
    used = api.services.quotas.usage(name)
    assert (used.instances, used.cores, used.ram) == (2, 8, 2048)


def _a_provider(api) -> str:
    return api.cloud.placement.list_providers()[0].uuid
