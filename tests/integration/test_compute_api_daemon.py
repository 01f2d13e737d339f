"""``cellplane-api``, the real daemon, beside the real ones: a server booted over HTTP (noauth2).

The deployment (tests/support/deployment.py) runs every daemon with the
local launcher, as ``deploy/run-local.sh start`` does, on real RabbitMQ
and PostgreSQL, with ``api.conf``: the launcher starts ``cellplane-api``
last, reading ``top.conf`` then ``api.conf`` (with ``[metrics] bind_port``).
A user's HTTP requests create a flavor (as admin), boot a server, watch it
become ACTIVE on a real (fake-driver) compute agent, and delete it; the
``cellplane`` CLI sees the same server, since both run ``cellplane_api.servers``.
Concurrent creates of one project, over HTTP and the CLI at once, stay
within its quota, and a project's server groups stop at theirs (the last
tests).
"""
from __future__ import annotations

import subprocess
import threading
import time

import pytest
import requests

from tests.support import cli_runner
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment, free_port
from tests.support.polling import eventually

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
    server = eventually(active, f'server {server_id} ACTIVE', seconds=EVENTUALLY_SECONDS)
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
    eventually(lambda: _call(deployment, 'GET', f'/v2.1/servers/{server_id}'
                             ).status_code == 404,
               f'server {server_id} gone', seconds=EVENTUALLY_SECONDS)
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


# Quotas on the real path: concurrent creates of one project, four over HTTP
# (one worker, four threads) and one from the CLI (another process), of two
# servers each, with the project's instances limit 4. The per-project lock
# row (cellplane/objects/quota_locks.py, a PostgreSQL row lock) makes them
# count and write one after the other: two are accepted, the others get
# Nova's quota message, and exactly four servers exist and go ACTIVE.
# (Without the lock all four HTTP creates were accepted: eight servers.)
PROJECT = 'quota'
TOKEN = f'{PROJECT}:{PROJECT}'
LIMIT = 4
EACH = 2


def _cli_create(deployment, name: str) -> subprocess.CompletedProcess:
    return cli_runner.run('cellplane_cli.cli', [
        'server', 'create', name, '--flavor', 'quota-tiny', '--count', str(EACH),
        '--project', PROJECT, '--user', PROJECT,
        '--config-file', str(deployment.config('top.conf')), '-f', 'json'], timeout=120)


def test_concurrent_creates_over_http_and_the_cli_end_with_no_more_than_the_limit(deployment):
    created = _call(deployment, 'POST', '/v2.1/flavors', {'flavor': {
        'name': 'quota-tiny', 'id': 'quota-tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}},
        token='admin:admin')
    assert created.status_code == 200, created.text
    # The deployment's [quota] defaults are unlimited: this project gets its own limits.
    limited = _call(deployment, 'PUT', f'/v2.1/os-quota-sets/{PROJECT}', {'quota_set': {
        'instances': LIMIT, 'cores': 20, 'ram': 51200}}, token='admin:admin')
    assert limited.status_code == 200, limited.text
    answers: dict[str, object] = {}

    def over_http(n: int) -> None:
        answers[f'http-{n}'] = _call(deployment, 'POST', '/v2.1/servers', {'server': {
            'name': f'race-{n}', 'flavorRef': 'quota-tiny', 'min_count': EACH,
            'max_count': EACH}}, token=TOKEN)

    def over_cli() -> None:
        answers['cli'] = _cli_create(deployment, 'race-cli')

    # The CLI first: its interpreter starts while the HTTP requests are sent.
    threads = [threading.Thread(target=over_cli)]
    threads += [threading.Thread(target=over_http, args=(n,)) for n in range(4)]
    threads[0].start()
    time.sleep(0.8)
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)

    accepted = [k for k, a in answers.items()
                if (a.returncode == 0 if k == 'cli' else a.status_code == 202)]
    refused = {k: a for k, a in answers.items() if k not in accepted}
    assert len(answers) == 5 and len(accepted) == LIMIT // EACH, {
        k: (a.returncode, a.stderr) if k == 'cli' else (a.status_code, a.text)
        for k, a in answers.items()}
    for key, answer in refused.items():
        text = answer.stderr if key == 'cli' else answer.json()['forbidden']['message']
        assert f'Quota exceeded for instances: Requested {EACH}, but already used' in text
        assert f'of {LIMIT} instances' in text

    def all_active():
        servers = _call(deployment, 'GET', '/v2.1/servers/detail', token=TOKEN).json()['servers']
        assert all(s['status'] in ('BUILD', 'ACTIVE') for s in servers), servers
        return servers if all(s['status'] == 'ACTIVE' for s in servers) else None
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    servers = None
    while servers is None:
        assert time.monotonic() < deadline, 'the accepted servers never became ACTIVE'
        servers = all_active()
        time.sleep(0.2)
    assert len(servers) == LIMIT
    # Placement holds the four (1 VCPU each) and limits reads usage from there.
    absolute = _call(deployment, 'GET', '/v2.1/limits', token=TOKEN).json()['limits']['absolute']
    assert (absolute['totalInstancesUsed'], absolute['totalCoresUsed']) == (LIMIT, LIMIT)
    # The CLI reads the same quota the API changes.
    raised = _call(deployment, 'PUT', f'/v2.1/os-quota-sets/{PROJECT}',
                   {'quota_set': {'instances': LIMIT + 2}}, token='admin:admin')
    assert raised.status_code == 200, raised.text
    shown = deployment.cli('quota', 'show', '--project', PROJECT, '--usage')
    assert {'resource': 'instances', 'limit': LIMIT + 2, 'in_use': LIMIT} in shown
    assert {'resource': 'cores', 'limit': 20, 'in_use': LIMIT} in shown


def test_the_daemon_refuses_a_server_group_past_the_projects_quota(deployment):
    """cellplane-api's own [quota] driver is its server groups' quota (app_from_conf wires it)."""
    project = 'groups'
    limited = _call(deployment, 'PUT', f'/v2.1/os-quota-sets/{project}',
                    {'quota_set': {'server_groups': 1}}, token='admin:admin')
    assert limited.status_code == 200, limited.text
    token = f'{project}:{project}'
    body = {'server_group': {'name': 'one', 'policies': ['anti-affinity']}}
    assert _call(deployment, 'POST', '/v2.1/os-server-groups', body,
                 token=token).status_code == 200
    body['server_group']['name'] = 'two'
    refused = _call(deployment, 'POST', '/v2.1/os-server-groups', body, token=token)
    assert refused.status_code == 403
    assert refused.json() == {'forbidden': {'code': 403, 'message':
                                            'Quota exceeded, too many server groups.'}}
    listed = _call(deployment, 'GET', '/v2.1/os-server-groups', token=token).json()
    assert [g['name'] for g in listed['server_groups']] == ['one']
