"""The scheduler's RPC client: what the super conductor imports to ask for destinations.

API versions:
    1.0 - select_destinations(request_spec, instance_uuids, num_alternates) call

Errors the scheduler answers with (NoValidHost, InvalidFlavorExtraSpec,
InvalidSchedulingRequest, ConsumerAlreadyAllocated) are raised here as the scheduler's own exception
classes, with the scheduler's message, rather than as oslo.messaging's
RemoteError.
"""
from __future__ import annotations

from typing import Sequence

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.context import RequestContext
from cellplane.rpc.client import RPCAPIClient

# isort: split
import oslo_messaging as messaging

from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from scheduler import errors

TOPIC = 'scheduler'

_ANSWERED_ERRORS = {cls.__name__: cls for cls in (
    errors.NoValidHost, errors.InvalidFlavorExtraSpec, errors.InvalidSchedulingRequest,
    errors.ConsumerAlreadyAllocated)}


class SchedulerAPI(RPCAPIClient):
    SERVICE = 'scheduler'
    TOPIC = TOPIC
    API_VERSION = '1.0'

    def select_destinations(self, ctxt: RequestContext, request_spec: RequestSpec,
                            instance_uuids: Sequence[str], num_alternates: int, *,
                            timeout: float | None = None) -> list[list[Selection]]:
        """Claim a host per instance; per instance the claimed host, then alternates."""
        cctxt = self.prepare('select_destinations', '1.0', timeout=timeout)
        try:
            return cctxt.call(ctxt, 'select_destinations', request_spec=request_spec,
                              instance_uuids=list(instance_uuids),
                              num_alternates=num_alternates)
        except messaging.RemoteError as exc:
            cls = _ANSWERED_ERRORS.get(exc.exc_type)
            if cls is None:
                raise
            raise cls(exc.value) from None
