"""BuildFailureWeigher: push down hosts whose recent builds failed.

The raw value is minus the ``failed_builds`` count the compute agent reports
(reset when a build succeeds), so a positive multiplier avoids failing hosts;
the large default lets a failing host lose against every healthy one.
"""
from __future__ import annotations

from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.weighers.base import HostWeigher


class BuildFailureWeigher(HostWeigher):
    name = 'BuildFailureWeigher'
    multiplier_option = 'build_failure_weight_multiplier'

    def raw_weight(self, host: HostState, request: SchedulingRequest) -> float:
        return -host.failed_builds
