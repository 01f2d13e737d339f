"""Evacuation on the real daemons (RabbitMQ, PostgreSQL): a dead host's server rebuilt elsewhere, the host cleaned up.

One cell of two compute agents whose fake guests outlive them
(``[fake_driver] state_dir``: the agent killed, its guests stay, as a
hypervisor's do). A server boots; its agent is killed (SIGKILL) and an
operator forces the host down and evacuates the server with the CLI. The
server is ACTIVE on the other host holding its allocation there, and the
migration's consumer holds the dead host's. The agent is started again: it
destroys its stale guest before it reports, and the migration's
allocation is gone (the migration ``completed``).
"""
from __future__ import annotations

import json
import os
import signal

import pytest

from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.polling import eventually

HOSTS = ('cell1-a', 'cell1-b')
SMALL = {'VCPU': 1, 'MEMORY_MB': 256, 'DISK_GB': 1}


@pytest.fixture
def deployment(tmp_path, rabbit_server, postgres_server):
    guests = tmp_path / 'guests'
    computes = [ComputePlan(host, 'cell1', fake_driver={'state_dir': str(guests)})
                for host in HOSTS]
    deployment = Deployment(tmp_path, rabbit_server, postgres_server, computes,
                            max_attempts=2).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def _guests(tmp_path, host: str) -> list[str]:
    path = tmp_path / 'guests' / f'{host}.json'
    return sorted(json.loads(path.read_text())['instances']) if path.exists() else []


def test_a_dead_hosts_server_is_evacuated_and_the_host_cleans_up_when_it_returns(
        deployment, tmp_path):
    [server] = deployment.cli('server', 'create', 'vm', '--flavor', 'small', '--wait')
    source = server['host']
    [other] = [h for h in HOSTS if h != source]
    assert _guests(tmp_path, source) == [server['id']]

    # Up: refused, in one line, exit 1; nothing recorded.
    refused = deployment.cli('server', 'evacuate', 'vm', json_output=False, exit_code=1)
    assert refused == ''
    assert deployment.cli('server', 'migration', 'list', '--server', 'vm') == []

    os.kill(deployment.pid(f'compute-{source}'), signal.SIGKILL)
    deployment.manage('service', 'force-down', source)
    moved = deployment.cli('server', 'evacuate', 'vm', '--wait')
    assert (moved['type'], moved['status'], moved['source_host'], moved['dest_host']) == (
        'evacuation', 'done', source, other)
    shown = deployment.cli('server', 'show', 'vm')
    assert (shown['status'], shown['host']) == ('ACTIVE', other)
    assert deployment.allocations_by_host(server['id']) == {other: SMALL}
    assert deployment.allocations_by_host(moved['id']) == {source: SMALL}
    assert _guests(tmp_path, other) == [server['id']]
    assert _guests(tmp_path, source) == [server['id']]     # the dead host's stale copy

    deployment.launch('start', '--no-create')               # the source's agent again
    eventually(lambda: _guests(tmp_path, source) == [],
               'the returning host destroyed its stale guest', seconds=EVENTUALLY_SECONDS)
    completed = eventually(lambda: (
        lambda m: m if m['status'] == 'completed' else None)(
        deployment.cli('server', 'migration', 'show', moved['id'])),
                           'the evacuation completed', seconds=EVENTUALLY_SECONDS)
    assert completed['dest_host'] == other
    assert deployment.allocations_by_host(moved['id']) == {}
    assert deployment.allocations_by_host(server['id']) == {other: SMALL}
    assert _guests(tmp_path, other) == [server['id']]
    log = deployment.log(f'compute-{source}')
    assert f'Instance {server["id"]} destroyed on {source}: it was evacuated' in log
    deployment.manage('service', 'force-down', source, '--unset')
    shown = deployment.cli('server', 'show', 'vm')
    assert (shown['status'], shown['host']) == ('ACTIVE', other)
