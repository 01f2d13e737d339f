"""The contract of a weigher and how weights are combined (as Nova does).

Each weigher gives every host a raw value; the values are scaled to 0..1
across the hosts being weighed (all equal -> all 0), multiplied by the
weigher's multiplier and summed per host. A positive multiplier prefers hosts
with a high raw value (spread, for free-resource weighers), a negative one
prefers a low value (pack).
"""
from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar, Sequence

from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest


class HostWeigher(abc.ABC):
    """Scores one property of a host. Subclasses set ``name`` and ``multiplier_option``."""

    name: ClassVar[str]
    #: The [filter_scheduler] option holding this weigher's multiplier.
    multiplier_option: ClassVar[str]

    def __init__(self, multiplier: float) -> None:
        self.multiplier = multiplier

    @abc.abstractmethod
    def raw_weight(self, host: HostState, request: SchedulingRequest) -> float:
        """The unscaled value: higher means preferred when the multiplier is positive."""


@dataclasses.dataclass
class WeighedHost:
    host: HostState
    weight: float
    # Weigher name -> its contribution (normalized value * multiplier).
    parts: dict[str, float]


def normalize(values: Sequence[float]) -> list[float]:
    """Scale ``values`` to 0..1 (min -> 0, max -> 1); all equal -> all 0."""
    if not values:
        return []
    low, high = min(values), max(values)
    if low == high:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def weigh_hosts(weighers: Sequence[HostWeigher], hosts: Sequence[HostState],
                request: SchedulingRequest) -> list[WeighedHost]:
    """Hosts with their total weight, best first (ties keep the input order)."""
    weighed = [WeighedHost(host=h, weight=0.0, parts={}) for h in hosts]
    for weigher in weighers:
        if not weigher.multiplier:
            continue
        raw = [float(weigher.raw_weight(h, request)) for h in hosts]
        for entry, value in zip(weighed, normalize(raw), strict=True):
            part = value * weigher.multiplier
            entry.parts[weigher.name] = part
            entry.weight += part
    return sorted(weighed, key=lambda w: -w.weight)
