"""AvailabilityZoneFilter: is the host in the availability zone the request asks for?

A host that no aggregate puts in a zone and whose agent reports none is in
``[DEFAULT] default_availability_zone`` (``nova``), as in Nova: a request for
that zone is placed on such hosts.
"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

NOT_IN_ZONE = 'not in requested availability zone'


class AvailabilityZoneFilter(HostFilter):
    name = 'AvailabilityZoneFilter'
    default_zone = 'nova'

    def configure(self, conf) -> None:
        self.default_zone = conf.default_availability_zone

    def applies(self, request: SchedulingRequest) -> bool:
        return bool(request.spec.availability_zone)

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        wanted = request.spec.availability_zone
        zone = host.availability_zone or self.default_zone
        if not wanted or zone == wanted:
            return None
        return self.reject(
            NOT_IN_ZONE, f'not in availability zone {wanted} (host is in {zone})')
