"""ComputeFilter: is the node's compute service up and enabled?"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

SERVICE_DOWN = 'compute service down'
SERVICE_DISABLED = 'compute service disabled'


class ComputeFilter(HostFilter):
    name = 'ComputeFilter'

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        if host.record.service_disabled:
            why = host.record.disabled_reason
            return self.reject(SERVICE_DISABLED,
                               f'{SERVICE_DISABLED}: {why}' if why else None)
        if not host.record.service_up:
            return self.reject(SERVICE_DOWN)
        return None
