"""ServerGroupSoftAntiAffinityWeigher: prefer hosts in domains with fewer of a soft-anti-affinity group's members.

The raw value is minus how many members (this request's earlier choices
included) are in the host's domain at the group's level (the host itself
at ``host``). Only for soft-anti-affinity groups; a preference, never a
refusal: when every domain has members the least crowded one wins.
"""
from __future__ import annotations

from rpc_schemas.request_spec import ANTI_AFFINITY
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.server_group import counts
from scheduler.weighers.base import HostWeigher


class ServerGroupSoftAntiAffinityWeigher(HostWeigher):
    name = 'ServerGroupSoftAntiAffinityWeigher'
    multiplier_option = 'soft_anti_affinity_weight_multiplier'

    def raw_weight(self, host: HostState, request: SchedulingRequest) -> float:
        members = counts.soft_members_near(request, host.host, ANTI_AFFINITY)
        return 0.0 if members is None else -members
