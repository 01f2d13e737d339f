"""RetryFilter: was this host already tried for this request (and failed)?"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

ALREADY_TRIED = 'host already tried for this request'


class RetryFilter(HostFilter):
    name = 'RetryFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return request.spec.retry is not None and bool(request.spec.retry.hosts)

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        retry = request.spec.retry
        if retry is not None and host.host in retry.hosts:
            return self.reject(ALREADY_TRIED,
                               f'{ALREADY_TRIED} (attempt {retry.num_attempts})')
        return None
