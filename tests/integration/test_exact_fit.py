"""Four scheduler workers, hosts with room for exactly K instances, K requests at once.

Real daemons on RabbitMQ and PostgreSQL: four ``cellplane-scheduler``
processes share the ``scheduler`` topic, 2 cells x 10 hollow hosts have 2
VCPU each (ratio 1.0), and 40 one-instance requests of a 1-VCPU flavor are
cast back to back, so the super conductor asks the workers concurrently and
each worker knows only its own claims. Every instance must be placed, no
host may hold more than its 2 VCPU, and the conflicts Placement refused are
counted from the workers' scheduling traces.
"""
from __future__ import annotations

import json
import time

import pytest
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db import engines
from cellplane.db.cell.models import instances
from cellplane.objects import flavors as api_flavors
from cellplane_api import servers
from conductor.super.rpcapi import SuperConductorAPI
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment

HOSTS_PER_CELL = 10
SLOTS_PER_HOST = 2
K = 2 * HOSTS_PER_CELL * SLOTS_PER_HOST
WORKERS = 4
TRACE_MARK = 'scheduling trace '


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    computes = [ComputePlan(f'{cell}-fit', cell, hosted_hosts=HOSTS_PER_CELL,
                            fake_driver={'vcpus': SLOTS_PER_HOST,
                                         'cpu_allocation_ratio': 1.0})
                for cell in ('cell1', 'cell2')]
    deployment = Deployment(tmp_path_factory.mktemp('exact-fit'), rabbit_server,
                            postgres_server, computes, trace_scheduling=True,
                            scheduler_workers=WORKERS).create()
    try:
        yield deployment
    finally:
        deployment.destroy()


def _final_states(deployment, uuids) -> dict[str, str]:
    found = {}
    for cell in deployment.cells:
        engine = deployment.cell_engine(cell)
        try:
            with engine.connect() as conn:
                found.update(conn.execute(
                    sa.select(instances.c.uuid, instances.c.vm_state)
                    .where(instances.c.uuid.in_(uuids))).all())
        finally:
            engine.dispose()
    return found


def _traces(deployment) -> list[tuple[int, dict]]:
    """(worker index, trace) of every scheduling run."""
    decoder = json.JSONDecoder()
    found = []
    for worker, log in enumerate(deployment.scheduler_logs()):
        for line in log.splitlines():
            at = line.find(TRACE_MARK)
            if at >= 0:
                found.append((worker, decoder.raw_decode(line, at + len(TRACE_MARK))[0]))
    return found


def test_k_concurrent_requests_fill_k_slots_exactly(deployment, client_transport_factory):
    api_engine = engines.create_engine(deployment.databases['api'])
    transport = client_transport_factory(deployment.transport_url('top'))
    try:
        api_flavors.create(api_engine, name='slot', vcpus=1, memory_mb=256, root_gb=1)
        conductor = SuperConductorAPI(transport)
        ctxt = new_context(user_id='u', project_id='p')
        uuids = []
        for i in range(K):
            uuids += servers.create(api_engine, conductor, ctxt, name=f'fit-{i}',
                                    flavor='slot', count=1, project_id='p', user_id='u')
    finally:
        api_engine.dispose()

    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        states = _final_states(deployment, uuids)
        if len(states) == K and set(states.values()) <= {'active', 'error'}:
            break
        assert time.monotonic() < deadline, f'not final: {states}'
        time.sleep(0.5)
    assert sorted(states.values()) == ['active'] * K

    placement = deployment.placement()
    providers = placement.list_providers()
    assert len(providers) == 2 * HOSTS_PER_CELL
    for provider in providers:
        usages = placement.transport.request(
            'GET', f'/resource_providers/{provider.uuid}/usages').body['usages']
        assert usages['VCPU'] == SLOTS_PER_HOST, (provider.name, usages)

    traces = _traces(deployment)
    placed = [t for _, t in traces if t.get('outcome') != 'no valid host']
    workers = {w for w, _ in traces}
    conflicts = sum(1 for _, t in traces for i in t['instances'] for c in i['claims']
                    if c['outcome'] == 'conflict')
    print(f'exact fit: {K} placed by {len(workers)} workers in {len(traces)} runs, '
          f'{conflicts} claim conflicts ({conflicts / K:.2f} per boot)')
    assert len(placed) >= K
    assert len(workers) > 1, 'one worker served every request: not a concurrency test'
