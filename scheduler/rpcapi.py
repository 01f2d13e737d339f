"""The scheduler's RPC client: what the super conductor imports to ask for destinations.

API versions:
    1.0 - select_destinations(request_spec, instance_uuids, num_alternates) call
    1.1 - select_destinations(..., migration_uuid=None): with a migration's
              uuid the one instance is moving: its claim gives its source
              allocation to the migration's Placement consumer and the
              destination to the instance, in one POST /allocations; its
              undo moves it back. A scheduler below 1.1 cannot place a move.

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
    API_VERSION = '1.1'

    def select_destinations(self, ctxt: RequestContext, request_spec: RequestSpec,
                            instance_uuids: Sequence[str], num_alternates: int, *,
                            migration_uuid: str | None = None,
                            timeout: float | None = None) -> list[list[Selection]]:
        """Claim a host per instance; per instance the claimed host, then alternates.

        ``migration_uuid``: the one instance moves (API 1.1); its claim is the
        migration-consumer claim.
        """
        args = {}
        version = '1.0'
        if migration_uuid is not None:
            version = '1.1'
            args['migration_uuid'] = migration_uuid
        cctxt = self.prepare('select_destinations', version, timeout=timeout)
        try:
            return cctxt.call(ctxt, 'select_destinations', request_spec=request_spec,
                              instance_uuids=list(instance_uuids),
                              num_alternates=num_alternates, **args)
        except messaging.RemoteError as exc:
            cls = _ANSWERED_ERRORS.get(exc.exc_type)
            if cls is None:
                raise
            raise cls(exc.value) from None
