"""A three-node RabbitMQ cluster losing nodes under running daemons, mid-stream of boots.

Once per module: a cluster of three RabbitMQ nodes of the test's own
(``tests/support/rabbit_cluster.py``: own ports, directories and cookie;
the shared broker is never touched) and a deployment of the real daemons
whose every ``transport_url`` lists the three nodes, with the example's
queue settings (quorum queues for the RPC servers, replies and fanouts,
stable queue names, stream fanouts). One cell of one hollow agent (3
hosts, builds of 0.5 s).

Each test boots servers in a stream of ``server create`` requests and,
in the middle of it:

- freezes the compute agent (SIGSTOP) so that builds wait in its queues,
  kills (SIGKILL) the node leading most of the queues holding them, starts
  it again (a new Erlang VM on the same data: it rejoins by itself) and
  thaws the agent;
- stops two of the three nodes (``stop_app``) for 10 s, then starts them:
  meanwhile no quorum queue has a majority;
- restarts the three nodes' RabbitMQ one after the other (``stop_app``,
  ``start_app``: a rolling restart).

Bar, each time: every server asked for is ACTIVE (none lost, none left in
BUILD or ERROR), one allocation per instance and none left over in
Placement, and every daemon is the process it was when the module
started (none died, none needed a restart).

Issue 27, item 2.
"""
from __future__ import annotations

import os
import signal
import time

import pytest
import sqlalchemy as sa

from cellplane.db.cell.models import instances
from cellplane_cli.launcher import Launcher
from tests.support.boot_stream import BootStream
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.rabbit_cluster import RabbitCluster

STOPPED_SECONDS = 10


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    cluster = RabbitCluster(tmp_path_factory.mktemp('rabbit-cluster')).start()
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, cluster, postgres_server):
    # One cell: the faults are the top level's and the cell's buses alike,
    # and each daemon fewer is CPU left to the three nodes.
    computes = [ComputePlan('cell1-a', 'cell1', hosted_hosts=3,
                            fake_driver={'build_seconds': 0.5, 'vcpus': 64})]
    deployment = Deployment(tmp_path_factory.mktemp('cluster'), cluster.server(),
                            postgres_server, computes, placement_workers=1).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def daemons(deployment):
    """Each daemon's pid when the deployment had started: {name: pid}."""
    return {d.spec.name: d.pid for d in Launcher(deployment.run_dir).recorded()}


def _settled(deployment, uuids: list[str]) -> None:
    """Until every instance of ``uuids`` is in a cell's database and out of BUILD."""
    cells = [deployment.cell_engine(cell) for cell in deployment.cells]
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    try:
        while True:
            states = {}
            for engine in cells:
                with engine.connect() as conn:
                    states.update(conn.execute(sa.select(
                        instances.c.uuid, instances.c.vm_state).where(
                            instances.c.uuid.in_(uuids))).all())
            unsettled = sorted(u for u in uuids if states.get(u, 'building') == 'building')
            if not unsettled:
                return
            assert time.monotonic() < deadline, f'lost or still building: {unsettled}'
            time.sleep(0.3)
    finally:
        for engine in cells:
            engine.dispose()


def _through(deployment, daemons, name: str, fault) -> None:
    """Boots before, during and after ``fault()``; then the bar."""
    booter = BootStream(deployment, name)
    booter.wait_for(1)
    fault()
    booter.wait_for(booter.requests + 1)
    uuids = booter.stop()

    _settled(deployment, uuids)
    listed = {s['id']: s for s in deployment.cli('server', 'list')}
    assert {u: listed.get(u, {}).get('status') for u in uuids} == \
        {u: 'ACTIVE' for u in uuids}

    # Every ACTIVE server of the module (those of the earlier tests too)
    # holds one allocation, and nothing else holds any.
    active = [s['id'] for s in listed.values() if s['status'] == 'ACTIVE']
    held = deployment.placement().allocations_by_consumer()
    assert set(held) == set(active), (sorted(set(held) - set(active)),
                                      sorted(set(active) - set(held)))
    assert all(len(providers) == 1 for providers in held.values()), held

    now = {d.spec.name: (d.pid, d.alive()) for d in Launcher(deployment.run_dir).recorded()}
    assert now == {name: (pid, True) for name, pid in daemons.items()}


def test_the_node_holding_the_queue_leaders_killed(deployment, daemons, cluster):
    agent = deployment.pid('compute-cell1-a')
    cell = deployment.vhosts['cell1']

    def kill_the_leaders_node() -> None:
        leaders = list(cluster.leaders(list(deployment.vhosts.values())).values())
        assert leaders, 'the deployment declared no quorum queue'
        # The agent frozen, the builds cast to it wait in its queues when
        # the node leading them dies: what a lost queue would lose.
        os.kill(agent, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + EVENTUALLY_SECONDS
            while not (queued := cluster.holding(cell)):
                assert time.monotonic() < deadline, 'no build was ever queued for the agent'
                time.sleep(0.3)
            holding = list(queued.values())
            node = cluster.node(max(set(holding), key=holding.count))
            cluster.kill(node)
            cluster.restart(node)
            cluster.wait_running()
        finally:
            os.kill(agent, signal.SIGCONT)
    _through(deployment, daemons, 'killed', kill_the_leaders_node)


def test_two_nodes_stopped_for_10_s(deployment, daemons, cluster):
    def stop_two() -> None:
        stopped = cluster.nodes[1:]
        cluster.each(cluster.stop_app, stopped)
        time.sleep(STOPPED_SECONDS)
        cluster.each(cluster.start_app, stopped)
        cluster.wait_running()
    _through(deployment, daemons, 'two-down', stop_two)


def test_a_rolling_restart_of_the_three_nodes(deployment, daemons, cluster):
    def rolling_restart() -> None:
        for node in cluster.nodes:
            cluster.stop_app(node)
            cluster.start_app(node)
            cluster.wait_running()
    _through(deployment, daemons, 'rolling', rolling_restart)
