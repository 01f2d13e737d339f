"""ServerGroupAntiAffinityFilter: for an anti-affinity group, is the host free of its members?"""
from __future__ import annotations

from rpc_schemas.request_spec import ANTI_AFFINITY
from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

RUNS_GROUP_MEMBER = 'anti-affinity: host already runs a member of the server group'


class ServerGroupAntiAffinityFilter(HostFilter):
    name = 'ServerGroupAntiAffinityFilter'

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        group = request.spec.instance_group
        if group is None or group.policy != ANTI_AFFINITY:
            return None
        if host.host in request.group_hosts():
            return self.reject(
                RUNS_GROUP_MEMBER,
                f'anti-affinity: host already runs a member of server group {group.uuid}')
        return None
