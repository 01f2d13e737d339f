"""ResourceFitFilter: does the host, as this scheduler knows it now, still have room?

Placement chose the candidates, but the host states may since have been
charged with claims Placement's reply did not include yet: earlier instances
of the same multi-create, and claims the host cache re-applies after a stale
read. Without this check those hosts would cost a lost claim each.
"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

INSUFFICIENT_RESOURCES = 'insufficient free resources'


class ResourceFitFilter(HostFilter):
    name = 'ResourceFitFilter'

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        short = [f'{rc} {host.free(rc)} free, {amount} needed'
                 for rc, amount in sorted(request.resources.items())
                 if rc in host.resources and host.free(rc) < amount]
        if short:
            return self.reject(INSUFFICIENT_RESOURCES,
                               f'{INSUFFICIENT_RESOURCES}: {"; ".join(short)}')
        return None
