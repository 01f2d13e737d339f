"""CPUWeigher: weigh hosts by free vCPUs (positive multiplier spreads, negative packs)."""
from __future__ import annotations

from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.weighers.base import HostWeigher


class CPUWeigher(HostWeigher):
    name = 'CPUWeigher'
    multiplier_option = 'cpu_weight_multiplier'

    def raw_weight(self, host: HostState, request: SchedulingRequest) -> float:
        return host.free('VCPU')
