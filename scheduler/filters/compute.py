"""ComputeFilter: is the node's compute service up and enabled, as far as its cell's database tells?

A node whose cell database could not be read at the last refresh is
refused too: its service may be down for all the scheduler knows, and the
super conductor could not write an instance into that cell anyway.
"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

SERVICE_DOWN = 'compute service down'
SERVICE_DISABLED = 'compute service disabled'
CELL_UNREADABLE = 'cell database unreachable'


class ComputeFilter(HostFilter):
    name = 'ComputeFilter'

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        if host.record.cell_unreadable:
            return self.reject(CELL_UNREADABLE, f'{CELL_UNREADABLE}: cell '
                               f'{host.cell_uuid}: {host.record.cell_unreadable}')
        if host.record.service_disabled:
            why = host.record.disabled_reason
            return self.reject(SERVICE_DISABLED,
                               f'{SERVICE_DISABLED}: {why}' if why else None)
        if not host.record.service_up:
            return self.reject(SERVICE_DOWN)
        return None
