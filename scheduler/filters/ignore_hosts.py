"""IgnoreHostsFilter: did the caller ask to keep the instance off this host?"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

HOST_IGNORED = 'host ignored by request'


class IgnoreHostsFilter(HostFilter):
    name = 'IgnoreHostsFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return bool(request.spec.ignore_hosts)

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        if host.host in request.spec.ignore_hosts:
            return self.reject(HOST_IGNORED)
        return None
