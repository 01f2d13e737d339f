"""ServerGroupAntiAffinityFilter: for an anti-affinity group, is the host clear of its members?

"Clear" is at the group's level: another host, or another failure domain (a
Placement aggregate such as a rack) than every member's, or one holding
fewer than the group's ``max_per_domain`` members. A host whose own domain
at that level is unknown cannot be shown to be clear and is refused. A soft
group is left to the weighers.
"""
from __future__ import annotations

from rpc_schemas.request_spec import ANTI_AFFINITY
from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.server_group import counts

RUNS_GROUP_MEMBER = 'anti-affinity: host already runs a member of the server group'
DOMAIN_HAS_GROUP_MEMBER = 'anti-affinity: failure domain already runs a group member'
HOST_DOMAIN_UNKNOWN = 'anti-affinity: failure domain of host unknown'


class ServerGroupAntiAffinityFilter(HostFilter):
    name = 'ServerGroupAntiAffinityFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        group = request.spec.instance_group
        return group is not None and group.policy == ANTI_AFFINITY and not group.soft

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        if not self.applies(request):
            return None
        group = request.spec.instance_group
        level = group.domain_level
        if level is None:
            if not counts.allows(request, host.host):
                return self.reject(
                    RUNS_GROUP_MEMBER,
                    f'anti-affinity: host already runs a member of server group {group.uuid}')
            return None
        own = host.failure_domain(level)
        if own is None:
            return self.reject(HOST_DOMAIN_UNKNOWN,
                               f'anti-affinity: host is in no known {level}')
        if not counts.allows(request, own):
            return self.reject(
                DOMAIN_HAS_GROUP_MEMBER,
                f'anti-affinity: {level} {own} already runs a member of server '
                f'group {group.uuid}')
        return None
