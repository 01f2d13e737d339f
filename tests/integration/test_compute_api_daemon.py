"""``cellplane-api``, the real daemon, beside the real ones: a server booted over HTTP (noauth2).

The deployment (tests/support/deployment.py) runs every daemon with the
local launcher, as ``deploy/run-local.sh start`` does, on real RabbitMQ
and PostgreSQL, with ``api.conf``: the launcher starts ``cellplane-api``
last, reading ``top.conf`` then ``api.conf`` (with ``[metrics] bind_port``).
A user's HTTP requests create a flavor (as admin), boot a server, watch it
become ACTIVE on a real (fake-driver) compute agent, and delete it; the
``cellplane`` CLI sees the same server, since both run ``cellplane_api.servers``.
"""
from __future__ import annotations

import time

import pytest
import requests

from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment, free_port

METRICS_PORT = free_port()


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = Deployment(
        tmp_path_factory.mktemp('compute-api'), rabbit_server, postgres_server,
        [ComputePlan('cell1-api', 'cell1')], compute_api=True,
        metrics_ports={'api': METRICS_PORT}).create()
    try:
        yield deployment
    finally:
        deployment.destroy()


def _call(deployment, method: str, path: str, body=None, *, token: str = 'demo:demo'):
    return requests.request(method, deployment.compute_api_url + path, json=body, timeout=30,
                            headers={'X-Auth-Token': token,
                                     'OpenStack-API-Version': 'compute 2.1'})


def _eventually(check, what: str):
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f'never happened: {what}'
        time.sleep(0.2)


def test_a_server_booted_over_http_becomes_active_and_is_deleted(deployment):
    versions = requests.get(deployment.compute_api_url + '/', timeout=10)
    assert versions.status_code == 200
    assert versions.json()['versions'][0]['id'] == 'v2.1'

    created = _call(deployment, 'POST', '/v2.1/flavors', {'flavor': {
        'name': 'tiny', 'id': 'tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}}, token='admin:admin')
    assert created.status_code == 200, created.text

    booted = _call(deployment, 'POST', '/v2.1/servers', {
        'server': {'name': 'over-http', 'flavorRef': 'tiny', 'imageRef': 'cirros'}})
    assert booted.status_code == 202, booted.text
    server_id = booted.json()['server']['id']
    assert booted.headers['Location'].endswith(f'/v2.1/servers/{server_id}')

    def active():
        server = _call(deployment, 'GET', f'/v2.1/servers/{server_id}').json()['server']
        assert server['status'] in ('BUILD', 'ACTIVE'), server
        return server if server['status'] == 'ACTIVE' else None
    server = _eventually(active, f'server {server_id} ACTIVE')
    assert (server['tenant_id'], server['user_id']) == ('demo', 'demo')
    assert server['image']['id'] == 'cirros'

    # The CLI runs the same code over the same databases: the same server, host and all.
    shown = deployment.cli('server', 'show', server_id)
    assert (shown['status'], shown['name']) == ('ACTIVE', 'over-http')
    as_admin = _call(deployment, 'GET', f'/v2.1/servers/{server_id}',
                     token='admin:admin').json()['server']
    assert as_admin['OS-EXT-SRV-ATTR:host'] == shown['host'] == 'cell1-api'

    listed = _call(deployment, 'GET', '/v2.1/servers/detail').json()['servers']
    assert [s['id'] for s in listed] == [server_id]
    assert _call(deployment, 'GET', '/v2.1/servers', token='other:other').json() == {
        'servers': []}

    assert _call(deployment, 'DELETE', f'/v2.1/servers/{server_id}').status_code == 204
    _eventually(lambda: _call(deployment, 'GET', f'/v2.1/servers/{server_id}'
                              ).status_code == 404, f'server {server_id} gone')
    # One request log line per request, with the version it was answered at.
    log = deployment.log('api')
    assert '"POST /v2.1/servers" status: 202' in log
    assert 'microversion: 2.1' in log


def test_the_workers_requests_are_counted_at_metrics_by_route_and_status(deployment):
    assert _call(deployment, 'GET', '/v2.1/flavors/none-such').status_code == 404
    scraped = requests.get(f'http://127.0.0.1:{METRICS_PORT}/metrics', timeout=10).text
    assert ('cellplane_api_requests_total{method="GET",route="/flavors/{flavor_id}",'
            'status="404"}') in scraped


def test_the_daemon_disables_a_host_in_placement_and_reads_usage_from_it(deployment):
    """What one process cannot show: the daemon's own [placement] client, over HTTP."""
    def call(method, path, body=None):
        return requests.request(method, deployment.compute_api_url + path, json=body,
                                timeout=30, headers={'X-Auth-Token': 'admin:admin',
                                                     'OpenStack-API-Version': 'compute 2.53'})
    hypervisors = call('GET', '/v2.1/os-hypervisors/detail').json()['hypervisors']
    assert [h['hypervisor_hostname'] for h in hypervisors] == ['cell1-api']
    node = hypervisors[0]
    placement = deployment.placement()
    inventory = placement.get_inventory(node['id'])
    assert (node['vcpus'], node['memory_mb']) == (inventory['VCPU'].total,
                                                  inventory['MEMORY_MB'].total)
    service_id = node['service']['id']
    disabled = call('PUT', f'/v2.1/os-services/{service_id}',
                    {'status': 'disabled', 'disabled_reason': 'integration'})
    assert disabled.status_code == 200, disabled.text
    assert 'COMPUTE_STATUS_DISABLED' in placement.get_traits(node['id'])
    assert call('PUT', f'/v2.1/os-services/{service_id}',
                {'status': 'enabled'}).json()['service']['status'] == 'enabled'
    assert 'COMPUTE_STATUS_DISABLED' not in placement.get_traits(node['id'])
