"""RAMWeigher: weigh hosts by free memory (positive multiplier spreads, negative packs)."""
from __future__ import annotations

from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.weighers.base import HostWeigher


class RAMWeigher(HostWeigher):
    name = 'RAMWeigher'
    multiplier_option = 'ram_weight_multiplier'

    def raw_weight(self, host: HostState, request: SchedulingRequest) -> float:
        return host.free('MEMORY_MB')
