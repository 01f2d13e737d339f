"""The contract of a host filter and the rejection it returns.

A filter's ``check`` returns ``None`` when the host passes, else a
``Rejection`` carrying a reason constant (counted in the scheduling record
and in NoValidHost: "80 removed by AvailabilityZoneFilter: not in requested
availability zone") and a detail for this host ("not in availability zone az2
(host is in az1)").
"""
from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar

from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest


@dataclasses.dataclass(frozen=True)
class Rejection:
    reason: str
    detail: str


class HostFilter(abc.ABC):
    """One question about one host. Subclasses set ``name`` and implement ``check``."""

    name: ClassVar[str]

    def applies(self, request: SchedulingRequest) -> bool:
        """False if this request asks nothing of this filter (it is then skipped).

        Asked once per instance rather than once per host: most requests use
        few of the enabled filters, and thousands of hosts make that count.
        """
        return True

    def configure(self, conf) -> None:
        """Read the options this filter needs from ``conf`` (most need none)."""
        return None

    @abc.abstractmethod
    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        """``None`` if ``host`` can take the instance, else why not."""

    @staticmethod
    def reject(reason: str, detail: str | None = None) -> Rejection:
        return Rejection(reason=reason, detail=detail or reason)
