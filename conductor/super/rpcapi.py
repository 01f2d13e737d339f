"""The super conductor's RPC client: what the API role imports to hand it a boot.

Served by the super conductor (``conductor/super/manager.py``) on topic
``conductor`` of the top-level bus, in RPC namespace ``super_conductor``.

API versions (the number continues the history of the conductor API this
method was part of until both conductors shared one; from now on this API
and the cell conductor's evolve apart):
    1.2 - schedule_and_build_instances(request_spec: RequestSpec,
              instance_uuids: list[str]) cast: the API role has written a
              build request per instance; schedule them all and cast each
              build to its cell.

``[upgrade_levels] super_conductor`` caps what this client sends.
"""
from __future__ import annotations

from typing import Sequence

from cellplane.context import RequestContext
from cellplane.rpc.client import RPCAPIClient
from rpc_schemas.request_spec import RequestSpec

TOPIC = 'conductor'
NAMESPACE = 'super_conductor'
API_VERSION = '1.2'


class SuperConductorAPI(RPCAPIClient):
    SERVICE = 'super_conductor'
    TOPIC = TOPIC
    NAMESPACE = NAMESPACE
    API_VERSION = API_VERSION

    def schedule_and_build_instances(self, ctxt: RequestContext,
                                     request_spec: RequestSpec,
                                     instance_uuids: Sequence[str]) -> None:
        """Cast to the super conductor: schedule the build requests of ``instance_uuids``."""
        self.prepare('schedule_and_build_instances', '1.2').cast(
            ctxt, 'schedule_and_build_instances', request_spec=request_spec,
            instance_uuids=list(instance_uuids))
