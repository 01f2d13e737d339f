"""Hollow compute agents through the real daemons on RabbitMQ and PostgreSQL.

Two cells, each served by ONE ``cellplane-compute`` process with ``[compute]
hosted_hosts = 25`` (hosts ``cellN-hollow-1..25``), a fake driver failing a
seeded 30 % of its builds, and the rest of the deployment as usual
(launcher, Placement, scheduler, conductors). Each hosted host must be a
host everywhere: its own provider, node and service rows, builds and
reschedules; killing the agent process takes all its hosts down in the
scheduler's view after ``service_down_time``.
"""
from __future__ import annotations

import os
import re
import signal
import time

import pytest
import sqlalchemy as sa

from cellplane.db.cell.models import instance_action_events, instance_actions, instances
from compute_agent.hosted_host import HOLLOW_HOST_TRAIT
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.polling import eventually

HOSTED = 25
SERVICE_DOWN_TIME = 6


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    computes = [ComputePlan(f'{cell}-hollow', cell, hosted_hosts=HOSTED,
                            fake_driver={'fail_fraction': 0.3, 'fail_seed': 11,
                                         'failure_reason': 'Hypervisor timed out'})
                for cell in ('cell1', 'cell2')]
    deployment = Deployment(tmp_path_factory.mktemp('hollow'), rabbit_server,
                            postgres_server, computes, max_attempts=4,
                            service_down_time=SERVICE_DOWN_TIME).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def booted(deployment):
    """40 instances in multi-creates of 10, waited for."""
    servers = []
    for batch in range(4):
        servers += deployment.cli('server', 'create', f'vm{batch}', '--flavor', 'small',
                                  '--count', '10', '--wait', exit_code=None)
    return servers


def test_every_hosted_host_has_its_provider_node_and_service(deployment):
    placement = deployment.placement()
    for cell in ('cell1', 'cell2'):
        providers = placement.list_providers(name_prefix=f'{cell}-hollow-')
        assert len(providers) == HOSTED
        assert all(HOLLOW_HOST_TRAIT in placement.get_traits(p.uuid) for p in providers)
    listed = deployment.manage('service', 'list')
    computes = {row['host'] for row in listed if row['binary'] == 'cellplane-compute'
                and row['state'] == 'up'}
    assert computes == {f'{cell}-hollow-{i}' for cell in ('cell1', 'cell2')
                        for i in range(1, HOSTED + 1)}
    # One process per cell serves them all.
    assert len([p for p in deployment.run_dir.glob('compute-*.pid')]) == 2


def test_instances_spread_over_many_hosted_hosts_with_allocations_on_their_hosts(
        deployment, booted):
    placement = deployment.placement()
    hosts = set()
    listed = deployment.cli('server', 'list')
    assert len(listed) == 40
    for server in listed:
        assert server['status'] in ('ACTIVE', 'ERROR'), server
        if server['status'] == 'ACTIVE':
            assert re.fullmatch(r'cell[12]-hollow-\d+', server['host']), server
            hosts.add(server['host'])
            (provider,) = placement.get_allocations(server['id']).allocations
            assert placement.get_provider(provider).name == server['host']
        else:
            # Out of attempts on 30 % failing hosts: the fault names the cause.
            assert 'Hypervisor timed out' in deployment.cli(
                'server', 'show', server['id'])['fault'], server
    assert len(hosts) >= 10


def test_a_build_failing_on_a_hosted_host_goes_to_another_host_of_the_same_agent(
        deployment, booted):
    moved = []
    for cell in ('cell1', 'cell2'):
        engine = deployment.cell_engine(cell)
        try:
            with engine.connect() as conn:
                rows = conn.execute(
                    sa.select(instances.c.host,
                              instance_action_events.c.host.label('tried'))
                    .select_from(instances
                                 .join(instance_actions,
                                       instance_actions.c.instance_uuid == instances.c.uuid)
                                 .join(instance_action_events,
                                       instance_action_events.c.action_id
                                       == instance_actions.c.id))
                    .where(instances.c.vm_state == 'active',
                           instance_action_events.c.result == 'failed')).all()
        finally:
            engine.dispose()
        moved += [(r.tried, r.host) for r in rows if r.tried != r.host]
    assert moved, 'no instance was rescheduled after a failed build'
    for failed_on, active_on in moved:
        # Both hosts are served by the same agent process: the cell's one.
        assert failed_on.rsplit('-', 1)[0] == active_on.rsplit('-', 1)[0]


def _compute_status(deployment) -> dict[str, str]:
    return {row['host']: row['state'] for row in deployment.manage('service', 'list')
            if row['binary'] == 'cellplane-compute'}


def test_one_hosted_host_is_stopped_and_started_alone_by_config_and_sighup(deployment):
    conf = deployment.config('compute-cell1-hollow.conf')
    original = conf.read_text()
    pid = deployment.pid('compute-cell1-hollow')
    conf.write_text(original.replace('[compute]\n', '[compute]\nstopped_hosts = cell1-hollow-3\n'))
    os.kill(pid, signal.SIGHUP)
    try:
        eventually(lambda: (
            (status := _compute_status(deployment))['cell1-hollow-3'] == 'down'
            and status['cell1-hollow-2'] == status['cell1-hollow-4'] == 'up'),
                   'cell1-hollow-3 down, its neighbours up', seconds=SERVICE_DOWN_TIME + EVENTUALLY_SECONDS)
    finally:
        conf.write_text(original)
        os.kill(pid, signal.SIGHUP)
    eventually(lambda: _compute_status(deployment)['cell1-hollow-3'] == 'up',
               'cell1-hollow-3 up again', seconds=SERVICE_DOWN_TIME + EVENTUALLY_SECONDS)
    assert 'Hosted host cell1-hollow-3 stopped' in deployment.log('compute-cell1-hollow')


def test_killing_the_agent_process_takes_all_its_hosts_down_for_the_scheduler(
        deployment, booted):
    pid = deployment.pid('compute-cell2-hollow')
    before = len(deployment.log('scheduler'))
    os.kill(pid, signal.SIGKILL)
    wanted = re.compile(rf'Host cache refreshed: {2 * HOSTED} compute node\(s\), '
                        rf'{HOSTED} up;')
    deadline = time.monotonic() + SERVICE_DOWN_TIME + EVENTUALLY_SECONDS
    while not wanted.search(deployment.log('scheduler')[before:]):
        assert time.monotonic() < deadline, \
            'the scheduler never saw exactly the hosts of cell2 go down'
        time.sleep(0.5)
    listed = deployment.manage('service', 'list')
    down = {row['host'] for row in listed
            if row['binary'] == 'cellplane-compute' and row['state'] == 'down'}
    assert down == {f'cell2-hollow-{i}' for i in range(1, HOSTED + 1)}
