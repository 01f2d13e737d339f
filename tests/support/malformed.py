"""Malformed casts to every topic of a deployment: what no cellplane client would send.

Used by the integration test of the malformed-messages row of the fault
table and by ``tools/fault_table.py``. Each target is a real method of the
daemon on that topic, called with arguments of the wrong type: every
daemon must log each one as rejected and go on serving.
"""
from __future__ import annotations

from cellplane.context import new_context
from cellplane.rpc.serializer import PayloadSerializer
from compute_agent import rpcapi as compute_rpcapi
from conductor.cell import rpcapi as cell_rpcapi
from conductor.super import rpcapi as super_rpcapi

# isort: split
import oslo_messaging as messaging

from scheduler import rpcapi as scheduler_rpcapi
from tests.support.deployment import Deployment


def targets(deployment: Deployment) -> list[tuple[str, str, str | None, str | None, str, dict]]:
    """(bus level, topic, namespace, server, method, bad arguments) for every daemon kind."""
    found = [('top', super_rpcapi.TOPIC, super_rpcapi.NAMESPACE, None,
              'schedule_and_build_instances',
              {'request_spec': {'x': 1}, 'instance_uuids': 'not-a-list'}),
             ('top', scheduler_rpcapi.TOPIC, None, None, 'select_destinations',
              {'request_spec': None, 'instance_uuids': [1, 2], 'num_alternates': 'x'})]
    for cell in deployment.cells:
        host = next(h for c in deployment.computes if c.cell == cell for h in c.hosts)
        found += [(cell, cell_rpcapi.TOPIC, cell_rpcapi.NAMESPACE, None, 'instance_update',
                   {'update': 'garbage'}),
                  (cell, cell_rpcapi.TOPIC, cell_rpcapi.NAMESPACE, None, 'reschedule_build',
                   {'instance': 7, 'request_spec': 8, 'host_list': 9, 'attempt': 10}),
                  # Its name before cell conductor API 1.5, served for one release.
                  (cell, cell_rpcapi.TOPIC, cell_rpcapi.NAMESPACE, None, 'build_instances',
                   {'instance': 7, 'request_spec': 8, 'host_list': 9, 'attempt': 10}),
                  (cell, compute_rpcapi.TOPIC, None, host, 'build_and_run_instance',
                   {'instance': 'x', 'request_spec': [], 'host_list': 'y'})]
    return found


def send_malformed(deployment: Deployment, each: int) -> int:
    """Cast ``each`` copies of every target's bad call; how many casts were sent."""
    sent = 0
    transports = {}
    try:
        for level, topic, namespace, server, method, kwargs in targets(deployment):
            transport = transports.get(level)
            if transport is None:
                transport = transports[level] = deployment.client_transport(level)
            client = messaging.get_rpc_client(
                transport, messaging.Target(topic=topic, namespace=namespace,
                                            server=server),
                serializer=PayloadSerializer())
            for _ in range(each):
                client.cast(new_context(), method, **kwargs)
                sent += 1
    finally:
        for transport in transports.values():
            transport.cleanup()
    return sent
