"""AvailabilityZoneFilter: is the host in the availability zone the request asks for?"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

NOT_IN_ZONE = 'not in requested availability zone'


class AvailabilityZoneFilter(HostFilter):
    name = 'AvailabilityZoneFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return bool(request.spec.availability_zone)

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        wanted = request.spec.availability_zone
        if not wanted or host.availability_zone == wanted:
            return None
        return self.reject(
            NOT_IN_ZONE, f'not in availability zone {wanted} '
                         f'(host is in {host.availability_zone or "no zone"})')
