"""DiskWeigher: weigh hosts by free disk (positive multiplier spreads, negative packs)."""
from __future__ import annotations

from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.weighers.base import HostWeigher


class DiskWeigher(HostWeigher):
    name = 'DiskWeigher'
    multiplier_option = 'disk_weight_multiplier'

    def raw_weight(self, host: HostState, request: SchedulingRequest) -> float:
        return host.free('DISK_GB')
