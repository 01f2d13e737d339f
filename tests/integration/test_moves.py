"""A cold migration and a resize through the real daemons, on RabbitMQ and PostgreSQL.

One cell of two compute agents (one host each, so the move's host-to-host
casts go between two processes on the cell's vhost), driven by the
``cellplane`` CLI as an operator would: boot, ``server migrate --wait``,
``server resize confirm --wait``, then ``server resize --flavor --wait``
and its confirm. At each step Placement holds what the move flow says:
finished and unconfirmed, the instance's consumer the destination and the
migration's the source; confirmed, the migration's nothing.
"""
from __future__ import annotations

import pytest

from tests.support.deployment import ComputePlan, Deployment

HOSTS = ('cell1-a', 'cell1-b')
SMALL = {'VCPU': 1, 'MEMORY_MB': 256, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 2}


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    computes = [ComputePlan(host, 'cell1') for host in HOSTS]
    deployment = Deployment(tmp_path_factory.mktemp('moves'), rabbit_server,
                            postgres_server, computes, max_attempts=2).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        deployment.cli('flavor', 'create', 'large', '--vcpus', '2', '--ram', '512',
                       '--disk', '2')
        yield deployment
    finally:
        deployment.destroy()


def test_a_cold_migration_then_a_resize_each_confirmed(deployment):
    [server] = deployment.cli('server', 'create', 'vm', '--flavor', 'small', '--wait')
    source = server['host']
    [other] = [h for h in HOSTS if h != source]
    assert deployment.allocations_by_host(server['id']) == {source: SMALL}

    moved = deployment.cli('server', 'migrate', 'vm', '--wait')
    assert (moved['type'], moved['status'], moved['source_host'], moved['dest_host']) == (
        'migration', 'finished', source, other)
    assert deployment.allocations_by_host(server['id']) == {other: SMALL}
    assert deployment.allocations_by_host(moved['id']) == {source: SMALL}
    shown = deployment.cli('server', 'show', 'vm')
    assert (shown['status'], shown['host']) == ('VERIFY_RESIZE', other)

    confirmed = deployment.cli('server', 'resize', 'confirm', 'vm', '--wait')
    assert (confirmed['id'], confirmed['status']) == (moved['id'], 'confirmed')
    assert deployment.allocations_by_host(moved['id']) == {}
    assert deployment.allocations_by_host(server['id']) == {other: SMALL}

    resized = deployment.cli('server', 'resize', 'vm', '--flavor', 'large', '--wait')
    assert (resized['type'], resized['status'], resized['dest_host'],
            resized['new_flavor']) == ('resize', 'finished', source, 'large')
    assert deployment.allocations_by_host(server['id']) == {source: LARGE}
    assert deployment.allocations_by_host(resized['id']) == {other: SMALL}
    deployment.cli('server', 'resize', 'confirm', 'vm', '--wait')
    assert deployment.allocations_by_host(resized['id']) == {}
    shown = deployment.cli('server', 'show', 'vm')
    assert (shown['status'], shown['host'], shown['flavor']) == ('ACTIVE', source, 'large')
    listed = deployment.cli('server', 'migration', 'list', '--server', 'vm')
    assert [(m['type'], m['status']) for m in listed] == [
        ('migration', 'confirmed'), ('resize', 'confirmed')]
