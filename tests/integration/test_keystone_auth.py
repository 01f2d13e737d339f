"""Real Keystone tokens end to end: Placement validating them, the daemons presenting them.

One deployment for the module (``tests/support/deployment.py`` with the
session's Keystone, ``tests/support/keystone.py``): ``cellplane-placement``
runs ``auth_strategy = keystone``, keystonemiddleware validating every token
with Keystone as the ``placement`` user; the scheduler, the super and cell
conductors and two compute agents log in as the ``service`` user
(keystoneauth1's password plugin from their ``[placement]`` sections) and
find Placement in Keystone's catalog. Users of two projects then call
Placement with their own tokens.
"""
from __future__ import annotations

import configparser

import pytest
import requests

from tests.support.deployment import ComputePlan, Deployment
from tests.support.keystone import ADMIN, MEMBER_A, MEMBER_B, READER_A

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server, keystone):
    deployment = Deployment(tmp_path_factory.mktemp('keystone-auth'), rabbit_server,
                            postgres_server, [ComputePlan('ks-host1', 'cell1'),
                                              ComputePlan('ks-host2', 'cell1')],
                            keystone=keystone).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '512',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def booted(deployment, keystone):
    """One server of project A, booted through the CLI and waited for."""
    return deployment.cli('server', 'create', 'vm-a', '--flavor', 'small', '--project',
                          keystone.project_id(MEMBER_A), '--user', MEMBER_A.name,
                          '--wait')[0]


def _get(deployment: Deployment, path: str, token: str | None) -> requests.Response:
    headers = {'OpenStack-API-Version': 'placement 1.23', 'Accept': 'application/json'}
    if token is not None:
        headers['X-Auth-Token'] = token
    return requests.get(deployment.placement_url + path, headers=headers, timeout=30)


def _assert_refused(resp: requests.Response, rule: str) -> None:
    """Placement's 403: its error format, naming the policy rule."""
    assert resp.status_code == 403, resp.text
    error = resp.json()['errors'][0]
    assert (error['status'], error['title'], error['code']) == \
        (403, 'Forbidden', 'placement.undefined_code')
    assert f'Policy does not allow {rule} to be performed.' in error['detail']


def test_the_daemons_reach_placement_as_the_service_user_through_the_catalog(deployment):
    for name in ('top.conf', 'cell1.conf', 'compute-ks-host1.conf', 'compute-ks-host2.conf'):
        conf = configparser.ConfigParser()
        conf.read(deployment.config(name))
        section = conf['placement']
        assert (section['auth_type'], section['username']) == ('password', 'cellplane'), name
        assert 'endpoint_url' not in section, name
    # Placement answers nobody without a token, yet both agents' providers
    # and inventories are there: they logged in.
    assert _get(deployment, '/resource_providers', None).status_code == 401
    providers = deployment.placement().transport.request(
        'GET', '/resource_providers').body['resource_providers']
    assert {p['name'] for p in providers} == {'ks-host1', 'ks-host2'}


def test_a_boot_through_the_real_daemons_goes_active_with_its_allocation(
        deployment, booted):
    assert booted['status'] == 'ACTIVE', booted
    placement = deployment.placement()
    providers = {p['name']: p['uuid'] for p in placement.transport.request(
        'GET', '/resource_providers').body['resource_providers']}
    held = placement.get_allocations(booted['id']).allocations
    assert held == {providers[booted['host']]: SMALL}


def test_a_project_reader_reads_its_own_usages_and_another_project_may_not(
        deployment, keystone, booted):
    project_a = keystone.project_id(MEMBER_A)
    own = _get(deployment, f'/usages?project_id={project_a}', keystone.token(READER_A))
    assert own.status_code == 200, own.text
    assert {rc: n for rc, n in own.json()['usages'].items() if n} == SMALL
    other = _get(deployment, f'/usages?project_id={project_a}', keystone.token(MEMBER_B))
    _assert_refused(other, 'placement:usages')


def test_a_project_members_token_is_refused_on_an_admin_route_with_placements_403(
        deployment, keystone):
    refused = _get(deployment, '/resource_providers', keystone.token(MEMBER_A))
    _assert_refused(refused, 'placement:resource_providers:list')
    assert _get(deployment, '/resource_providers', keystone.token(ADMIN)).status_code == 200


def test_an_invalid_or_revoked_token_is_401_with_where_to_get_one(deployment, keystone):
    invalid = _get(deployment, '/resource_providers', 'not-a-keystone-token')
    assert invalid.status_code == 401
    assert invalid.headers['WWW-Authenticate'] == f'Keystone uri="{keystone.url}"'

    token = keystone.token(ADMIN)
    keystone.adapter(ADMIN).delete('/auth/tokens', headers={'X-Subject-Token': token})
    assert _get(deployment, '/resource_providers', token).status_code == 401


def test_the_operators_placement_audit_logs_in_as_the_service_user_too(deployment, booted):
    # top.conf's [placement], read by cellplane-manage as by the top-level
    # daemons: the booted server's allocation is found and explained.
    assert deployment.manage('placement', 'audit') == []
