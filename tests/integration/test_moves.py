"""A cold migration and a resize through the real daemons, on RabbitMQ and PostgreSQL.

One cell of two compute agents (one host each, so the move's host-to-host
casts go between two processes on the cell's vhost), driven by the
``cellplane`` CLI as an operator would: boot, ``server migrate --wait``,
``server resize confirm --wait``, then ``server resize --flavor --wait``
and its confirm. At each step Placement holds what the move flow says:
finished and unconfirmed, the instance's consumer the destination and the
migration's the source; confirmed, the migration's nothing. A server
deleted while its move waits for confirm (VERIFY_RESIZE) leaves nothing
on its source: its copy destroyed there, the migration's allocation gone.
"""
from __future__ import annotations

import oslo_messaging as messaging
import pytest

from cellplane.context import new_context
from cellplane.objects import migrations
from cellplane.rpc.serializer import PayloadSerializer
from tests.support.deployment import ComputePlan, Deployment
from tests.support.polling import eventually

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


def test_a_server_deleted_waiting_for_confirm_leaves_nothing_on_its_source(deployment):
    [server] = deployment.cli('server', 'create', 'gone', '--flavor', 'small', '--wait')
    moved = deployment.cli('server', 'migrate', 'gone', '--wait')
    assert moved['status'] == 'finished'
    source = moved['source_host']
    assert _guest_state(deployment, source, server['id']) == 'stopped'
    assert deployment.allocations_by_host(moved['id']) == {source: SMALL}

    deployment.cli('server', 'delete', 'gone', json_output=False)

    engine = deployment.cell_engine('cell1')
    try:
        eventually(lambda: _migration(engine, moved['id']).status != migrations.FINISHED,
                   'the move ended after the delete')
        assert _migration(engine, moved['id']).status == migrations.CONFIRMED
    finally:
        engine.dispose()
    assert deployment.allocations_by_host(moved['id']) == {}
    assert deployment.allocations_by_host(server['id']) == {}
    # Cast to the source before the migration was written confirmed.
    eventually(lambda: _guest_state(deployment, source, server['id']) == 'absent',
               f'{source} destroyed its stopped copy')


def _migration(engine, uuid: str) -> migrations.Migration:
    with engine.connect() as conn:
        return migrations.get(conn, uuid)


def _guest_state(deployment, host: str, instance_uuid: str) -> str:
    """``running``, ``stopped``, ``moving`` or ``absent``: what ``host``'s agent holds of the instance."""
    transport = deployment.client_transport('cell1')
    try:
        client = messaging.get_rpc_client(
            transport, messaging.Target(topic='compute', server=host, version='1.7'),
            serializer=PayloadSerializer(), timeout=10)
        return client.call(new_context(), 'guest_state', host=host,
                           instance_uuid=instance_uuid)
    finally:
        transport.cleanup()
