"""Rows of the fault table: a daemon killed mid-stream and restarted within seconds fails no boot.

Nor does a stream of malformed messages.

One cell, one hollow agent of 4 hosts (1 s builds), real RabbitMQ,
PostgreSQL and daemons (``deploy/run-local.sh``). Each test kills one
process by pid (SIGKILL) while boots are in flight or being asked for,
restarts it with the launcher a few seconds later, and then asserts what
every row of the fault table must end with when the daemon came back
quickly: every instance ACTIVE (none in ERROR, none in BUILD), no build
request left, and Placement holding exactly one allocation per instance,
on the provider of the host it runs on. The malformed-messages row sends
bad casts to every topic first (``tests/support/malformed.py``): each
daemon logs each one as rejected and goes on serving the boots after them.
"""
from __future__ import annotations

import os
import signal
import time

import pytest
import sqlalchemy as sa

from cellplane.db.api.models import build_requests
from cellplane.db.cell.models import instances
from scheduler import rpcapi as scheduler_rpcapi
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.malformed import send_malformed
from tests.support.polling import eventually


@pytest.fixture
def deployment(tmp_path, rabbit_server, postgres_server):
    computes = [ComputePlan('cell1-a', 'cell1', hosted_hosts=4,
                            fake_driver={'build_seconds': 1})]
    # service_down_time keeps its default (60 s): the cell conductor records
    # the heartbeats, so while it is dead its hosts would look down to the
    # scheduler after a shorter one, and boots in between get NoValidHost.
    deployment = Deployment(tmp_path, rabbit_server, postgres_server, computes,
                            rpc_response_timeout=10,
                            super_conductor={'resume_interval': 1}).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def _create(deployment, name: str, count: int = 1) -> list[str]:
    return [s['id'] for s in deployment.cli('server', 'create', name, '--flavor', 'small',
                                            '--count', str(count))]


def _api_count(deployment, *where) -> int:
    engine = sa.create_engine(deployment.databases['api'])
    try:
        with engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(
                build_requests).where(*where)).scalar()
    finally:
        engine.dispose()


def _assert_all_active_once(deployment, wanted: set[str]) -> None:
    """Nothing in BUILD, everything ACTIVE, one allocation each on its host."""
    engine = deployment.cell_engine('cell1')
    try:
        def settled():
            with engine.connect() as conn:
                rows = conn.execute(sa.select(instances.c.uuid, instances.c.host,
                                              instances.c.vm_state)).all()
            done = {r.uuid: r for r in rows}
            return done if set(done) == wanted and all(
                r.vm_state != 'building' for r in rows) else None
        states = eventually(settled,
                            'every instance in its cell and out of BUILD', seconds=3 * EVENTUALLY_SECONDS)
    finally:
        engine.dispose()
    assert {u: r.vm_state for u, r in states.items()} == {u: 'active' for u in wanted}
    assert {s['id']: s['status'] for s in deployment.cli('server', 'list')} == \
        {u: 'ACTIVE' for u in wanted}
    assert _api_count(deployment) == 0
    placement = deployment.placement()
    providers = {p.name: p.uuid for p in placement.list_providers(name_prefix='cell1-')}
    for uuid, row in states.items():
        assert list(placement.get_allocations(uuid).allocations) == [providers[row.host]]
    used = 0
    for provider in providers.values():
        resp = placement.transport.request('GET', f'/resource_providers/{provider}/usages')
        used += resp.body['usages'].get('VCPU', 0)
    assert used == len(wanted)


def test_boots_held_by_a_killed_super_conductor_are_resumed_and_built_once(deployment):
    # The scheduler frozen: the super conductor is caught holding the boots
    # it leased and asked about.
    placement = deployment.placement()
    scheduler = deployment.pid('scheduler')
    os.kill(scheduler, signal.SIGSTOP)
    try:
        held = _create(deployment, 'held-1', 2) + _create(deployment, 'held-2', 2)
        eventually(lambda: _api_count(deployment, build_requests.c.instance_uuid.in_(held),
                                      build_requests.c.lease_token.is_not(None)) == 4,
                   'the super conductor leased both boots', seconds=EVENTUALLY_SECONDS)
        # Its lease is written before its call is published: killed between
        # the two, it would have asked nothing of the scheduler.
        eventually(lambda: deployment.queued('top', scheduler_rpcapi.TOPIC) >= 2,
                   'both boots asked of the scheduler', seconds=EVENTUALLY_SECONDS)
        os.kill(deployment.pid('super-conductor'), signal.SIGKILL)
        late = _create(deployment, 'late')
    finally:
        os.kill(scheduler, signal.SIGCONT)
    # The scheduler answers the dead process: it claimed for nobody.
    eventually(lambda: all(placement.get_allocations(u).allocations for u in held),
               'the scheduler claimed for the held boots', seconds=EVENTUALLY_SECONDS)

    deployment.launch('start', '--no-create')      # the super conductor again

    _assert_all_active_once(deployment, set(held + late))
    assert 'Resuming the build of' in deployment.log('super-conductor')


def test_a_killed_scheduler_restarted_within_seconds_fails_no_boot(deployment):
    first = _create(deployment, 'before', 2)
    os.kill(deployment.pid('scheduler'), signal.SIGKILL)
    during = _create(deployment, 'during', 2)
    time.sleep(5)
    deployment.launch('start', '--no-create')       # the scheduler again
    after = _create(deployment, 'after')

    _assert_all_active_once(deployment, set(first + during + after))


def test_placement_killed_and_restarted_within_seconds_fails_no_boot(deployment):
    first = _create(deployment, 'before', 2)
    # Placement and its workers: the launcher starts it in a session of its own.
    os.killpg(deployment.pid('placement'), signal.SIGKILL)
    during = _create(deployment, 'during', 2)
    time.sleep(5)
    deployment.launch('start', '--no-create')       # Placement again
    after = _create(deployment, 'after')

    _assert_all_active_once(deployment, set(first + during + after))


def test_a_killed_cell_conductor_restarted_within_seconds_fails_no_boot(deployment):
    # Builds in flight report to the cell conductor: ACTIVE results and
    # heartbeats wait in its durable queue while it is dead.
    first = _create(deployment, 'before', 4)
    os.kill(deployment.pid('conductor-cell1'), signal.SIGKILL)
    during = _create(deployment, 'during', 2)
    time.sleep(5)
    deployment.launch('start', '--no-create')       # the cell conductor again
    after = _create(deployment, 'after')

    _assert_all_active_once(deployment, set(first + during + after))


def test_malformed_casts_to_every_topic_are_logged_and_fail_no_boot(deployment):
    each = 20
    assert send_malformed(deployment, each) == 6 * each
    wanted = set(_create(deployment, 'after-bad', count=2))
    wanted |= set(_create(deployment, 'after-bad-2', count=2))

    _assert_all_active_once(deployment, wanted)
    rejected = {
        'super-conductor': 'Rejected schedule_and_build_instances',
        'conductor-cell1': 'Rejected instance_update',
        'compute-cell1-a': 'Rejected build_and_run_instance',
        'scheduler': 'Rejected select_destinations',
    }
    for daemon, line in rejected.items():
        assert deployment.log(daemon).count(line) == each, daemon
    assert deployment.log('conductor-cell1').count('Rejected reschedule_build') == each
    assert deployment.log('conductor-cell1').count('Rejected build_instances') == each
    for daemon in ('scheduler', 'super-conductor', 'conductor-cell1', 'compute-cell1-a'):
        os.kill(deployment.pid(daemon), 0)    # raises if the daemon died
