"""``cellplane-manage host drain`` through the real daemons, on RabbitMQ and PostgreSQL.

One cell of three compute agents (a host each). Four servers are put on
one host (the two others disabled while they boot); ``host drain --cold
--parallel 2`` empties it, each move confirmed by the drain; then the
servers now on a second host are drained from it live. After each drain
every server is ACTIVE on another host holding its allocation there,
nothing is left on a migration's consumer, and the drained host's service
is disabled (reason ``draining``) until ``host undrain``.
"""
from __future__ import annotations

import pytest

from tests.support.deployment import ComputePlan, Deployment

HOSTS = ('cell1-a', 'cell1-b', 'cell1-c')
SMALL = {'VCPU': 1, 'MEMORY_MB': 256, 'DISK_GB': 1}


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    computes = [ComputePlan(host, 'cell1') for host in HOSTS]
    deployment = Deployment(tmp_path_factory.mktemp('drain'), rabbit_server,
                            postgres_server, computes, max_attempts=2).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def _service(deployment, host: str) -> dict:
    [row] = [r for r in deployment.manage('service', 'list')
             if r['host'] == host and r['binary'] == 'cellplane-compute']
    return row


def _drained(deployment, host: str, rows: list[dict], servers: list[str]) -> None:
    assert sorted(r['server'] for r in rows) == sorted(servers)
    assert {r['result'] for r in rows} == {'moved'}
    for row in rows:
        shown = deployment.cli('server', 'show', row['server'])
        assert (shown['status'], shown['host']) == ('ACTIVE', row['dest_host'])
        assert row['dest_host'] != host
        assert deployment.allocations_by_host(row['server']) == {row['dest_host']: SMALL}
        assert deployment.allocations_by_host(row['migration']) == {}
    service = _service(deployment, host)
    assert (service['status'], service['disabled_reason']) == ('disabled', 'draining')


def test_a_host_drained_cold_then_another_live_each_left_empty_and_disabled(deployment):
    for host in HOSTS[1:]:
        deployment.manage('service', 'disable', host)
    try:
        booted = deployment.cli('server', 'create', 'vm', '--flavor', 'small', '--count',
                                '4', '--wait')
    finally:
        for host in HOSTS[1:]:
            deployment.manage('service', 'enable', host)
    servers = [s['id'] for s in booted]
    assert {s['host'] for s in booted} == {HOSTS[0]}

    rows = deployment.manage('host', 'drain', HOSTS[0], '--cold', '--parallel', '2')
    _drained(deployment, HOSTS[0], rows, servers)
    listed = deployment.cli('server', 'migration', 'list')
    assert sorted((m['type'], m['status']) for m in listed) == [('migration', 'confirmed')] * 4

    # The servers now on b go live to c (a is still disabled, draining).
    on_b = [r['server'] for r in rows if r['dest_host'] == HOSTS[1]]
    live = deployment.manage('host', 'drain', HOSTS[1], '--parallel', '2')
    _drained(deployment, HOSTS[1], live, on_b)
    assert {r['dest_host'] for r in live} <= {HOSTS[2]}

    for host in HOSTS[:2]:
        undrained = deployment.manage('host', 'undrain', host)
        assert (undrained['disabled'], undrained['disabled_reason']) == (False, None)
        assert _service(deployment, host)['status'] == 'enabled'
    assert {deployment.cli('server', 'show', s)['status'] for s in servers} == {'ACTIVE'}
