"""SameHostFilter: does the host run one of the instances the ``same_host`` hint names?

If the hint names instances but none of them could be located, no host
qualifies: placing elsewhere would silently break the user's request.
"""
from __future__ import annotations

from rpc_schemas.scheduler_hints import SAME_HOST
from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

LACKS_HINTED_INSTANCE = 'host runs none of the instances named in same_host'


class SameHostFilter(HostFilter):
    name = 'SameHostFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return bool(request.hint(SAME_HOST))

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        if not request.hint(SAME_HOST):
            return None
        if host.host in request.hosts_of_hinted(SAME_HOST):
            return None
        return self.reject(LACKS_HINTED_INSTANCE)
