"""ServerGroupAffinityFilter: for an affinity group, is this the host its members run on?

The first instance of an empty group may go anywhere; every later one (also
within the same multi-create) must join the hosts already chosen.
"""
from __future__ import annotations

from rpc_schemas.request_spec import AFFINITY
from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

NOT_GROUP_HOST = 'affinity: host does not run the server group'


class ServerGroupAffinityFilter(HostFilter):
    name = 'ServerGroupAffinityFilter'

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        group = request.spec.instance_group
        if group is None or group.policy != AFFINITY:
            return None
        hosts = request.group_hosts()
        if not hosts or host.host in hosts:
            return None
        return self.reject(
            NOT_GROUP_HOST,
            f'affinity: server group {group.uuid} runs on {", ".join(sorted(hosts))}')
