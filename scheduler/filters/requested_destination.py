"""RequestedDestinationFilter: is this the host, node and cell the caller asked for?"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

NOT_REQUESTED_HOST = 'not the requested host'
NOT_REQUESTED_NODE = 'not the requested node'
NOT_REQUESTED_CELL = 'not in the requested cell'


class RequestedDestinationFilter(HostFilter):
    name = 'RequestedDestinationFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return request.spec.requested_destination is not None

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        dest = request.spec.requested_destination
        if dest is None:
            return None
        if dest.host and host.host != dest.host:
            return self.reject(NOT_REQUESTED_HOST, f'not the requested host {dest.host}')
        if dest.nodename and host.nodename != dest.nodename:
            return self.reject(NOT_REQUESTED_NODE,
                               f'not the requested node {dest.nodename}')
        if dest.cell_uuid and host.cell_uuid != dest.cell_uuid:
            return self.reject(NOT_REQUESTED_CELL,
                               f'not in the requested cell {dest.cell_uuid}')
        return None
