"""ServerGroupAffinityFilter: for an affinity group, is the host where its members run?

"Where" is the group's level: the host itself, or the failure domain (a
Placement aggregate such as a rack) its members' hosts are in. The first
instance of an empty group may go anywhere; every later one (also within the
same multi-create) must join the domain already chosen. A soft group is left
to the weighers.
"""
from __future__ import annotations

from rpc_schemas.request_spec import AFFINITY
from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.server_group import counts

NOT_GROUP_HOST = 'affinity: host does not run the server group'
NOT_GROUP_DOMAIN = 'affinity: host is outside the failure domain of the server group'
MEMBERS_DOMAIN_UNKNOWN = 'affinity: failure domain of the group members unknown'


class ServerGroupAffinityFilter(HostFilter):
    name = 'ServerGroupAffinityFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        group = request.spec.instance_group
        return group is not None and group.policy == AFFINITY and not group.soft

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        if not self.applies(request):
            return None
        group = request.spec.instance_group
        level = group.domain_level
        members, unknown = counts.domain_counts(request)
        domains = set(members)
        if level is None:
            if counts.allows(request, host.host):
                return None
            return self.reject(
                NOT_GROUP_HOST,
                f'affinity: server group {group.uuid} runs on {", ".join(sorted(domains))}')
        if not domains:
            if not unknown:
                return None
            return self.reject(
                MEMBERS_DOMAIN_UNKNOWN,
                f'affinity: no {level} is known for the hosts of server group '
                f'{group.uuid} ({", ".join(sorted(unknown))})')
        own = host.failure_domain(level)
        if own is not None and counts.allows(request, own):
            return None
        return self.reject(
            NOT_GROUP_DOMAIN,
            f'affinity: host is in {level} {own or "none"}, '
            f'server group {group.uuid} is in {level} {", ".join(sorted(domains))}')
