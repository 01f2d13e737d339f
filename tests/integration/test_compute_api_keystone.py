"""``cellplane-api`` with real Keystone tokens: the session's Keystone (tests/support/keystone.py).

The deployment runs ``cellplane-api`` and ``cellplane-placement`` with
``auth_strategy = keystone`` (keystonemiddleware validating every token
with Keystone). Users of two projects boot and read servers over HTTP with
their own tokens: the project and roles the API judges are the token's.
"""
from __future__ import annotations

import time

import pytest
import requests

from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.keystone import ADMIN, MEMBER_A, MEMBER_B, READER_A


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server, keystone):
    deployment = Deployment(tmp_path_factory.mktemp('compute-api-keystone'), rabbit_server,
                            postgres_server, [ComputePlan('cell1-ks', 'cell1')],
                            compute_api=True, keystone=keystone).create()
    try:
        yield deployment
    finally:
        deployment.destroy()


def _call(deployment, method: str, path: str, token: str | None, body=None):
    headers = {} if token is None else {'X-Auth-Token': token}
    return requests.request(method, deployment.compute_api_url + path, json=body,
                            headers=headers, timeout=30)


def test_users_boot_and_see_their_projects_servers_with_keystone_tokens(deployment, keystone):
    admin, alice, rita, bob = (keystone.token(u) for u in (ADMIN, MEMBER_A, READER_A, MEMBER_B))
    assert _call(deployment, 'GET', '/v2.1/flavors', None).status_code == 401
    assert _call(deployment, 'GET', '/v2.1/flavors', 'not-a-token').status_code == 401
    flavor = {'flavor': {'name': 'ks-small', 'id': 'ks-small', 'ram': 128, 'vcpus': 1,
                         'disk': 1}}
    assert _call(deployment, 'POST', '/v2.1/flavors', alice, flavor).status_code == 403
    assert _call(deployment, 'POST', '/v2.1/flavors', admin, flavor).status_code == 200

    server = {'server': {'name': 'alices', 'flavorRef': 'ks-small', 'imageRef': 'cirros'}}
    refused = _call(deployment, 'POST', '/v2.1/servers', rita, server)
    assert refused.status_code == 403
    assert 'os_compute_api:servers:create' in refused.json()['forbidden']['message']
    booted = _call(deployment, 'POST', '/v2.1/servers', alice, server)
    assert booted.status_code == 202, booted.text
    server_id = booted.json()['server']['id']

    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        shown = _call(deployment, 'GET', f'/v2.1/servers/{server_id}', rita).json()['server']
        if shown['status'] == 'ACTIVE':
            break
        assert shown['status'] == 'BUILD' and time.monotonic() < deadline, shown
        time.sleep(0.2)
    assert shown['tenant_id'] == keystone.project_id(MEMBER_A)
    assert _call(deployment, 'GET', f'/v2.1/servers/{server_id}', bob).status_code == 404
    assert _call(deployment, 'GET', '/v2.1/servers', bob).json() == {'servers': []}
    assert _call(deployment, 'DELETE', f'/v2.1/servers/{server_id}', alice).status_code == 204
