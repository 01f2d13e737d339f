"""RabbitMQ restarted (``stop_app``, a few seconds, ``start_app``) with work queued: no boot is lost.

One cell, one hollow agent of 4 hosts (1 s builds), real daemons. Work is
made to sit in queues when the broker stops: the compute agent is frozen
(SIGSTOP) while builds are cast to it, then the super conductor is frozen
while more boots are asked for. RabbitMQ's application is stopped for 5 s
and started again, the two processes are thawed, and every instance must
end ACTIVE with one allocation on its host: with cellplane's durable
queues the queued casts wait out the restart (with non-durable queues they
vanish with their queues, and the instances stay in BUILD).

The broker is a node of this test's own (``own_rabbit``), so restarting it
touches no other test.
"""
from __future__ import annotations

import os
import signal
import time

import pytest
import sqlalchemy as sa

from cellplane.db.cell.models import instances
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment


@pytest.fixture
def deployment(tmp_path, own_rabbit, postgres_server):
    computes = [ComputePlan('cell1-a', 'cell1', hosted_hosts=4,
                            fake_driver={'build_seconds': 1})]
    # service_down_time stays at its default (60 s): the frozen agent must
    # not be taken for dead meanwhile.
    deployment = Deployment(tmp_path, own_rabbit, postgres_server, computes,
                            rpc_response_timeout=10).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def _create(deployment, name: str, count: int) -> list[str]:
    return [s['id'] for s in deployment.cli('server', 'create', name, '--flavor', 'small',
                                            '--count', str(count))]


def _instances(engine):
    with engine.connect() as conn:
        return {r.uuid: r for r in conn.execute(sa.select(
            instances.c.uuid, instances.c.host, instances.c.vm_state)).all()}


def test_work_queued_across_a_broker_restart_is_not_lost(deployment, own_rabbit):
    engine = deployment.cell_engine('cell1')
    agent = deployment.pid('compute-cell1-a')
    conductor = deployment.pid('super-conductor')
    frozen = []
    try:
        os.kill(agent, signal.SIGSTOP)
        frozen.append(agent)
        cast = _create(deployment, 'cast', 4)      # builds queued for the agent
        # Each build is logged as cast once the broker confirmed it (the
        # instance's row is written before: no signal that it was sent).
        deadline = time.monotonic() + EVENTUALLY_SECONDS
        while not all(f'Instance {u} placed in cell' in deployment.log('super-conductor')
                      for u in cast):
            assert time.monotonic() < deadline, 'the builds were never cast'
            time.sleep(0.2)
        os.kill(conductor, signal.SIGSTOP)
        frozen.append(conductor)
        asked = _create(deployment, 'asked', 3)    # boots queued for the super conductor

        own_rabbit.restart_app(down_seconds=5)
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)

    wanted = set(cast + asked)
    deadline = time.monotonic() + 3 * EVENTUALLY_SECONDS
    while True:
        rows = _instances(engine)
        if set(rows) == wanted and all(r.vm_state != 'building' for r in rows.values()):
            break
        assert time.monotonic() < deadline, (
            f'not all out of BUILD: {sorted((r.vm_state, u) for u, r in rows.items())}, '
            f'{len(wanted - set(rows))} never reached the cell')
        time.sleep(0.5)
    engine.dispose()
    assert {u: r.vm_state for u, r in rows.items()} == {u: 'active' for u in wanted}
    placement = deployment.placement()
    providers = {p.name: p.uuid for p in placement.list_providers(name_prefix='cell1-')}
    for uuid, row in rows.items():
        assert list(placement.get_allocations(uuid).allocations) == [providers[row.host]]
