"""ServerGroupAntiAffinityFilter: for an anti-affinity group, is the host clear of its members?

"Clear" is at the group's level: another host, or another failure domain (a
Placement aggregate such as a rack) than every member's. A host whose own
domain at that level is unknown cannot be shown to be clear and is refused.
"""
from __future__ import annotations

from rpc_schemas.request_spec import ANTI_AFFINITY
from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

RUNS_GROUP_MEMBER = 'anti-affinity: host already runs a member of the server group'
DOMAIN_HAS_GROUP_MEMBER = 'anti-affinity: failure domain already runs a group member'
HOST_DOMAIN_UNKNOWN = 'anti-affinity: failure domain of host unknown'


class ServerGroupAntiAffinityFilter(HostFilter):
    name = 'ServerGroupAntiAffinityFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        group = request.spec.instance_group
        return group is not None and group.policy == ANTI_AFFINITY

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        group = request.spec.instance_group
        if group is None or group.policy != ANTI_AFFINITY:
            return None
        level = request.group_level()
        domains, _ = request.group_domains()
        if level is None:
            if host.host in domains:
                return self.reject(
                    RUNS_GROUP_MEMBER,
                    f'anti-affinity: host already runs a member of server group {group.uuid}')
            return None
        own = host.failure_domain(level)
        if own is None:
            return self.reject(HOST_DOMAIN_UNKNOWN,
                               f'anti-affinity: host is in no known {level}')
        if own in domains:
            return self.reject(
                DOMAIN_HAS_GROUP_MEMBER,
                f'anti-affinity: {level} {own} already runs a member of server '
                f'group {group.uuid}')
        return None
