"""ServerGroupSoftAffinityWeigher: prefer hosts in the domain where a soft-affinity group's members are.

The raw value is how many members (this request's earlier choices
included) are in the host's domain at the group's level (the host itself at
``host``). Only for soft-affinity groups; a preference, never a refusal.
"""
from __future__ import annotations

from rpc_schemas.request_spec import AFFINITY
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.server_group import counts
from scheduler.weighers.base import HostWeigher


class ServerGroupSoftAffinityWeigher(HostWeigher):
    name = 'ServerGroupSoftAffinityWeigher'
    multiplier_option = 'soft_affinity_weight_multiplier'

    def raw_weight(self, host: HostState, request: SchedulingRequest) -> float:
        members = counts.soft_members_near(request, host.host, AFFINITY)
        return 0.0 if members is None else members
