"""Quotas on the real path: concurrent creates of one project, over HTTP and the CLI at once, stay within the limit.

One deployment (real RabbitMQ, PostgreSQL, Placement, conductors, a
compute agent and ``cellplane-api`` with one worker of four threads) with
``[quota] instances = 4`` in top.conf, which the API and the CLI both
read. Four HTTP creates and one ``cellplane server create`` (another
process) of two servers each start together: the per-project lock row
(``cellplane/objects/quota_locks.py``, a PostgreSQL row lock) makes them
count and write one after the other, so two are accepted, the others get
Nova's quota message, and exactly four servers exist and go ACTIVE.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
import requests

from tests.support.deployment import EVENTUALLY_SECONDS, UNLIMITED_QUOTA, ComputePlan, Deployment

LIMIT = 4
EACH = 2


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = Deployment(
        tmp_path_factory.mktemp('quotas'), rabbit_server, postgres_server,
        [ComputePlan('cell1-q', 'cell1')], compute_api=True,
        quota={**UNLIMITED_QUOTA, 'instances': LIMIT, 'cores': 20, 'ram': 51200}).create()
    try:
        yield deployment
    finally:
        deployment.destroy()


def _call(deployment, method: str, path: str, body=None, *, token: str = 'demo:demo'):
    return requests.request(method, deployment.compute_api_url + path, json=body, timeout=60,
                            headers={'X-Auth-Token': token,
                                     'OpenStack-API-Version': 'compute 2.1'})


def _cli_create(deployment, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, '-m', 'cellplane_cli.cli', 'server', 'create', name, '--flavor',
         'tiny', '--count', str(EACH), '--project', 'demo', '--user', 'demo',
         '--config-file', str(deployment.config('top.conf')), '-f', 'json'],
        capture_output=True, text=True, timeout=120)


def test_concurrent_creates_over_http_and_the_cli_end_with_no_more_than_the_limit(deployment):
    created = _call(deployment, 'POST', '/v2.1/flavors', {'flavor': {
        'name': 'tiny', 'id': 'tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}}, token='admin:admin')
    assert created.status_code == 200, created.text
    answers: dict[str, object] = {}

    def over_http(n: int) -> None:
        answers[f'http-{n}'] = _call(deployment, 'POST', '/v2.1/servers', {'server': {
            'name': f'race-{n}', 'flavorRef': 'tiny', 'min_count': EACH,
            'max_count': EACH}})

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
        servers = _call(deployment, 'GET', '/v2.1/servers/detail').json()['servers']
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
    absolute = _call(deployment, 'GET', '/v2.1/limits').json()['limits']['absolute']
    assert (absolute['totalInstancesUsed'], absolute['totalCoresUsed']) == (LIMIT, LIMIT)
    # The CLI reads the same quota the API changes.
    raised = _call(deployment, 'PUT', '/v2.1/os-quota-sets/demo',
                   {'quota_set': {'instances': LIMIT + 2}}, token='admin:admin')
    assert raised.status_code == 200, raised.text
    shown = deployment.cli('quota', 'show', '--project', 'demo', '--usage')
    assert {'resource': 'instances', 'limit': LIMIT + 2, 'in_use': LIMIT} in shown
    assert {'resource': 'cores', 'limit': 20, 'in_use': LIMIT} in shown
