"""DifferentHostFilter: is the host free of the instances the ``different_host`` hint names?"""
from __future__ import annotations

from rpc_schemas.scheduler_hints import DIFFERENT_HOST
from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

RUNS_HINTED_INSTANCE = 'host runs an instance named in different_host'


class DifferentHostFilter(HostFilter):
    name = 'DifferentHostFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return bool(request.hint(DIFFERENT_HOST))

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        if host.host in request.hosts_of_hinted(DIFFERENT_HOST):
            return self.reject(RUNS_HINTED_INSTANCE)
        return None
