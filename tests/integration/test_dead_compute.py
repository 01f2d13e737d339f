"""A compute agent killed mid-stream: its builds move to other hosts, nothing stays in BUILD, nothing leaks.

One cell served by two hollow agents of 3 hosts each (``cell1-a-1..3`` and
``cell1-b-1..3``), builds that take 3 s, ``service_down_time`` 4 s and the
cell conductor looking for dead hosts every second. 12 instances are asked
for; as soon as builds run on agent ``a``'s hosts, the agent process is
killed (SIGKILL, never restarted). Every instance must end ACTIVE on a host
of agent ``b`` or in ERROR with a fault that names the host that went down;
none may stay in BUILD, and Placement must hold exactly the allocations of
the ACTIVE instances, each on its own host.
"""
from __future__ import annotations

import json
import os
import signal
import time

import pytest
import sqlalchemy as sa

from cellplane.db.cell.models import instance_action_events, instance_actions, instances
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment

SERVICE_DOWN_TIME = 4
BUILD_SECONDS = 3


@pytest.fixture
def deployment(tmp_path, rabbit_server, postgres_server):
    computes = [ComputePlan(f'cell1-{agent}', 'cell1', hosted_hosts=3,
                            fake_driver={'build_seconds': BUILD_SECONDS})
                for agent in ('a', 'b')]
    deployment = Deployment(tmp_path, rabbit_server, postgres_server, computes,
                            max_attempts=3, service_down_time=SERVICE_DOWN_TIME,
                            cell_conductor={'stalled_build_check_interval': 1}).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def _rows(engine):
    with engine.connect() as conn:
        return conn.execute(sa.select(instances.c.uuid, instances.c.host,
                                      instances.c.vm_state)).all()


def _move_reasons(engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(
            sa.select(instance_action_events.c.reason)
            .select_from(instance_action_events.join(
                instance_actions,
                instance_actions.c.id == instance_action_events.c.action_id))
            .where(instance_action_events.c.reason.like('%went down%'))).scalars())


def test_builds_on_a_killed_agent_move_to_live_hosts_and_nothing_leaks(deployment):
    engine = deployment.cell_engine('cell1')
    try:
        deployment.cli('server', 'create', 'vm', '--flavor', 'small', '--count', '12')
        deadline = time.monotonic() + EVENTUALLY_SECONDS
        while not any(r.vm_state == 'building' and (r.host or '').startswith('cell1-a-')
                      for r in _rows(engine)):
            assert time.monotonic() < deadline, 'no build ever ran on agent a'
            time.sleep(0.1)
        pid = deployment.pid('compute-cell1-a')
        os.kill(pid, signal.SIGKILL)

        # Each move waits for service_down_time; a move to another dead host
        # waits again (at most max_attempts - 1 moves), then a build.
        settle = 3 * (SERVICE_DOWN_TIME + 2) + BUILD_SECONDS + EVENTUALLY_SECONDS
        deadline = time.monotonic() + settle
        while True:
            rows = _rows(engine)
            if len(rows) == 12 and not any(r.vm_state == 'building' for r in rows):
                break
            assert time.monotonic() < deadline, (
                f'still in BUILD after {settle} s: '
                f'{[(r.uuid, r.host) for r in rows if r.vm_state == "building"]}')
            time.sleep(0.5)

        active = {r.uuid: r.host for r in rows if r.vm_state == 'active'}
        errors = [r.uuid for r in rows if r.vm_state == 'error']
        assert all(host.startswith('cell1-b-') for host in active.values()), active
        assert _move_reasons(engine), 'no build was recorded as moved off a dead host'
        servers = {s['id']: s for s in deployment.cli('server', 'list')}
        for uuid in errors:
            shown = deployment.cli('server', 'show', uuid)
            assert 'went down' in json.dumps(shown), shown
        assert set(servers) == {r.uuid for r in rows}

        placement = deployment.placement()
        providers = {p.name: p.uuid for p in placement.list_providers(name_prefix='cell1-')}
        for uuid, host in active.items():
            assert list(placement.get_allocations(uuid).allocations) == [providers[host]]
        for uuid in errors:
            assert placement.get_allocations(uuid).allocations == {}
        used = {}
        for name, provider in providers.items():
            resp = placement.transport.request('GET', f'/resource_providers/{provider}/usages')
            used[name] = resp.body['usages'].get('VCPU', 0)
        assert sum(used.values()) == len(active)
    finally:
        engine.dispose()
