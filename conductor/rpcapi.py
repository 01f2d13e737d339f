"""The conductor's RPC client: what other services import to talk to a conductor.

API versions:
    1.0 - service_heartbeat(status: ServiceStatus) cast
"""
from __future__ import annotations

from cellplane.context import RequestContext
from cellplane.rpc.client import RPCAPIClient
from rpc_schemas.service_status import ServiceStatus

TOPIC = 'conductor'


class ConductorAPI(RPCAPIClient):
    SERVICE = 'conductor'
    TOPIC = TOPIC
    API_VERSION = '1.0'

    def service_heartbeat(self, ctxt: RequestContext, status: ServiceStatus) -> None:
        """Cast a heartbeat to the cell conductor, which records it in the cell DB."""
        self.prepare('service_heartbeat', '1.0').cast(ctxt, 'service_heartbeat',
                                                      status=status)
