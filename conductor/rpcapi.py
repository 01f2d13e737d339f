"""The conductor's RPC client: what other services import to talk to a conductor.

The same topic, ``conductor``, is served by the super conductor on the
top-level bus and by each cell conductor on its cell's bus; which one a
client reaches is decided by the transport it is given. The methods below
marked (cell) are served by the cell conductor only (conductor/cell_manager.py),
reached by the compute agents of its cell and never from above.

API versions:
    1.0 - service_heartbeat(status: ServiceStatus) cast (cell)
    1.1 - build_instances(instance: Instance, request_spec: RequestSpec,
              host_list: list[Selection], attempt: BuildAttempt) cast (cell):
              the reschedule. ``attempt`` is the build that just failed (on
              the host whose allocation the cell conductor now removes);
              ``host_list`` is what is left of the alternates, unclaimed.
          instance_update(update: InstanceUpdate) cast (cell): a state a
              compute agent reached (ACTIVE, ERROR, DELETED), with the build
              attempt behind it, recorded as an action event.
          compute_node_update(node: ComputeNodeRecord) cast (cell): upsert
              the node's row in the cell DB's compute_nodes.
    1.2 - schedule_and_build_instances(request_spec: RequestSpec,
              instance_uuids: list[str]) cast (super): the API role has
              written a build request per instance; schedule them all and
              cast each build to its cell.
"""
from __future__ import annotations

from typing import Sequence

from cellplane.context import RequestContext
from cellplane.rpc.client import RPCAPIClient
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.compute_node import ComputeNodeRecord
from rpc_schemas.instance import Instance
from rpc_schemas.instance_update import InstanceUpdate
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from rpc_schemas.service_status import ServiceStatus

TOPIC = 'conductor'


class ConductorAPI(RPCAPIClient):
    SERVICE = 'conductor'
    TOPIC = TOPIC
    API_VERSION = '1.2'

    def service_heartbeat(self, ctxt: RequestContext, status: ServiceStatus) -> None:
        """Cast a heartbeat to the cell conductor, which records it in the cell DB."""
        self.prepare('service_heartbeat', '1.0').cast(ctxt, 'service_heartbeat',
                                                      status=status)

    def build_instances(self, ctxt: RequestContext, instance: Instance,
                        request_spec: RequestSpec, host_list: Sequence[Selection],
                        attempt: BuildAttempt) -> None:
        """Cast a reschedule to the cell conductor: the build in ``attempt`` failed."""
        self.prepare('build_instances', '1.1').cast(
            ctxt, 'build_instances', instance=instance, request_spec=request_spec,
            host_list=list(host_list), attempt=attempt)

    def instance_update(self, ctxt: RequestContext, update: InstanceUpdate) -> None:
        """Cast a state change of one instance to the cell conductor."""
        self.prepare('instance_update', '1.1').cast(ctxt, 'instance_update',
                                                    update=update)

    def compute_node_update(self, ctxt: RequestContext, node: ComputeNodeRecord) -> None:
        """Cast a compute node's record to the cell conductor, which upserts it."""
        self.prepare('compute_node_update', '1.1').cast(ctxt, 'compute_node_update',
                                                        node=node)

    def schedule_and_build_instances(self, ctxt: RequestContext,
                                     request_spec: RequestSpec,
                                     instance_uuids: Sequence[str]) -> None:
        """Cast to the super conductor: schedule the build requests of ``instance_uuids``."""
        self.prepare('schedule_and_build_instances', '1.2').cast(
            ctxt, 'schedule_and_build_instances', request_spec=request_spec,
            instance_uuids=list(instance_uuids))
