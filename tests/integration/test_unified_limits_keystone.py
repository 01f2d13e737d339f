"""Quotas from Keystone unified limits (``[quota] driver = unified_limits``) against a real Keystone.

The deployment runs ``cellplane-api`` with keystone auth and ``[oslo_limit]``
naming the compute endpoint of its own region, read as a user with the
reader role on the system. The test creates the compute service's
registered limits in that region through Keystone's API (what ``openstack
registered limit create --service compute --region R ...`` does), boots
through the compute API with a member's token up to the limit, is refused
(403, oslo.limit's message, nothing written) past it, then raises the
project's own limit (``openstack limit create``) and boots again.
"""
from __future__ import annotations

import concurrent.futures
import uuid

import pytest
import requests

from cellplane.db import engines
from cellplane.objects import instance_mappings
from tests.support.deployment import ComputePlan, Deployment
from tests.support.keystone import ADMIN, MEMBER_A, MEMBER_B, READER_A
from tests.support.polling import eventually

REGISTERED = {'servers': 2, 'class:VCPU': 20, 'class:MEMORY_MB': 4096,
              'server_groups': 1, 'server_group_members': 2}


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server, keystone):
    reader = keystone.system_reader(f'cellplane-limits-{uuid.uuid4().hex[:8]}')
    deployment = Deployment(tmp_path_factory.mktemp('unified-limits'), rabbit_server,
                            postgres_server, [ComputePlan('cell1-ul', 'cell1')],
                            compute_api=True, keystone=keystone,
                            quota={'driver': 'unified_limits'}, oslo_limit=reader).create()
    try:
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def compute_service(deployment, keystone):
    """The compute service's id and the deployment's region, with REGISTERED registered there."""
    admin = keystone.system_admin()
    service_id = admin.get('/services', params={'type': 'compute'}).json()['services'][0]['id']
    answer = admin.post('/registered_limits', json={'registered_limits': [
        {'service_id': service_id, 'region_id': deployment.region, 'resource_name': name,
         'default_limit': limit} for name, limit in REGISTERED.items()]}, raise_exc=False)
    assert answer.status_code == 201, answer.text
    return service_id, deployment.region


def _call(deployment, method: str, path: str, token: str, body=None):
    return requests.request(method, deployment.compute_api_url + path, json=body,
                            headers={'X-Auth-Token': token}, timeout=60)


def _boot(deployment, token: str, name: str, **extra):
    return _call(deployment, 'POST', '/v2.1/servers', token, {'server': {
        'name': name, 'flavorRef': 'ul-small', 'imageRef': 'cirros', **extra}})


def _servers_in_api_db(deployment, project_id: str) -> int:
    engine = engines.create_engine(deployment.direct_url('api'))
    try:
        with engine.connect() as conn:
            return instance_mappings.count_of_project(conn, project_id)
    finally:
        engine.dispose()


def test_boots_stop_at_the_registered_limit_and_a_project_limit_raises_it(
        deployment, keystone, compute_service):
    admin, alice, rita = (keystone.token(u) for u in (ADMIN, MEMBER_A, READER_A))
    project = keystone.project_id(MEMBER_A)
    assert _call(deployment, 'POST', '/v2.1/flavors', admin, {'flavor': {
        'name': 'ul-small', 'id': 'ul-small', 'ram': 128, 'vcpus': 1,
        'disk': 1}}).status_code == 200

    # The registered limits, under Nova's names (class:DISK_GB has none: unlimited,
    # [quota] unified_limits_resource_strategy = require with only servers listed).
    shown = _call(deployment, 'GET', f'/v2.1/os-quota-sets/{project}', rita).json()['quota_set']
    assert (shown['instances'], shown['cores'], shown['ram'], shown['server_groups'],
            shown['server_group_members']) == (2, 20, 4096, 1, 2)

    booted = _boot(deployment, alice, 'ul', min_count=2, max_count=2)
    assert booted.status_code == 202, booted.text
    refused = _boot(deployment, alice, 'ul-3')
    assert refused.status_code == 403, refused.text
    assert refused.json() == {'forbidden': {'code': 403, 'message': (
        f'Project {project} is over a limit for [Resource servers is over limit of 2 '
        f'due to current usage 2 and delta 1]')}}
    assert _servers_in_api_db(deployment, project) == 2, 'the refused create wrote nothing'

    # A project limit (openstack limit create --project ... --resource-limit 3 servers).
    service_id, region = compute_service
    answer = keystone.system_admin().post('/limits', json={'limits': [{
        'service_id': service_id, 'region_id': region, 'project_id': project,
        'resource_name': 'servers', 'resource_limit': 3}]}, raise_exc=False)
    assert answer.status_code == 201, answer.text
    # min_count 1 of 2: as many as fit are made, as Nova does.
    partly = _boot(deployment, alice, 'ul-more', min_count=1, max_count=2)
    assert partly.status_code == 202, partly.text
    assert _servers_in_api_db(deployment, project) == 3
    assert _boot(deployment, alice, 'ul-5').status_code == 403
    assert _servers_in_api_db(deployment, project) == 3

    # A server being claimed is counted from its flavor and from Placement for a
    # moment (too much, never too little: quotas.placement_usage): read once placed.
    eventually(lambda: all(s['status'] == 'ACTIVE' for s in _call(
        deployment, 'GET', '/v2.1/servers/detail', alice).json()['servers']),
        'the project\'s 3 servers ACTIVE', seconds=120)
    absolute = _call(deployment, 'GET', '/v2.1/limits', alice).json()['limits']['absolute']
    assert (absolute['maxTotalInstances'], absolute['totalInstancesUsed']) == (3, 3)
    assert (absolute['maxTotalCores'], absolute['totalCoresUsed']) == (20, 3)
    assert (absolute['maxTotalRAMSize'], absolute['totalRAMUsed']) == (4096, 384)


def test_quota_set_update_changes_nothing_as_nova_with_unified_limits(
        deployment, keystone, compute_service):
    admin = keystone.token(ADMIN)
    project = keystone.project_id(MEMBER_B)
    before = _call(deployment, 'GET', f'/v2.1/os-quota-sets/{project}', admin).json()
    updated = _call(deployment, 'PUT', f'/v2.1/os-quota-sets/{project}', admin,
                    {'quota_set': {'instances': 50}})
    assert updated.status_code == 200, updated.text
    assert updated.json()['quota_set']['instances'] == before['quota_set']['instances'] != 50
    assert _call(deployment, 'DELETE', f'/v2.1/os-quota-sets/{project}',
                 admin).status_code == 202
    assert _call(deployment, 'GET', f'/v2.1/os-quota-sets/{project}', admin).json() == before
    defaults = _call(deployment, 'GET', f'/v2.1/os-quota-sets/{project}/defaults',
                     admin).json()['quota_set']
    assert defaults['instances'] == REGISTERED['servers']


def test_the_cli_reads_keystone_and_refuses_to_set(deployment, keystone, compute_service):
    project = keystone.project_id(MEMBER_B)
    shown = {row['resource']: row['limit']
             for row in deployment.cli('quota', 'show', '--project', project, '--defaults')}
    assert shown['instances'] == REGISTERED['servers']
    refused = deployment.cli('quota', 'set', '--project', project, '--instances', '9',
                             json_output=False, exit_code=2)
    assert refused == ''


def test_server_groups_stop_at_their_limit(deployment, keystone, compute_service):
    alice = keystone.token(MEMBER_A)
    body = {'server_group': {'name': 'g1', 'policies': ['anti-affinity']}}
    assert _call(deployment, 'POST', '/v2.1/os-server-groups', alice,
                 body).status_code == 200
    body['server_group']['name'] = 'g2'
    refused = _call(deployment, 'POST', '/v2.1/os-server-groups', alice, body)
    assert refused.status_code == 403, refused.text
    assert 'Resource server_groups is over limit of 1' in refused.json()['forbidden']['message']


def test_concurrent_creates_never_pass_the_limit(deployment, keystone, compute_service):
    """Eight creates at once with room for two: two pass (the project's quota lock orders them)."""
    service_id, region = compute_service
    user = keystone.token(MEMBER_B)
    project = keystone.project_id(MEMBER_B)
    before = _servers_in_api_db(deployment, project)
    answer = keystone.system_admin().post('/limits', json={'limits': [{
        'service_id': service_id, 'region_id': region, 'project_id': project,
        'resource_name': 'servers', 'resource_limit': before + 2}]}, raise_exc=False)
    assert answer.status_code == 201, answer.text
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        statuses = sorted(pool.map(lambda n: _boot(deployment, user, f'race-{n}').status_code,
                                   range(8)))
    assert statuses == [202, 202] + [403] * 6
    assert _servers_in_api_db(deployment, project) == before + 2
