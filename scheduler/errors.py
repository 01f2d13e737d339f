"""Why the scheduler could not do what it was asked: the exceptions it raises.

Each message is written for an operator: it names the flavor key, the
filter or the counts that explain the failure.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.trace import SchedulingTrace


class SchedulerError(Exception):
    """Base class of the scheduler's own errors."""


class InvalidFlavorExtraSpec(SchedulerError):
    """A flavor extra spec the scheduler must understand has a bad key or value."""


class InvalidSchedulingRequest(SchedulerError):
    """select_destinations was called with arguments it cannot use (a caller bug)."""


class ConsumerAlreadyAllocated(SchedulerError):
    """An instance to schedule already holds allocations in Placement.

    Usually a retried select_destinations whose first call did claim: no host
    is to blame, so the claim walk stops instead of trying every host.
    """


class UnknownPlugin(SchedulerError):
    """A filter or weigher named in the configuration is not installed."""


class NoValidHost(SchedulerError):
    """No host could be claimed for an instance; ``str()`` says why, with counts.

    ``trace`` is the whole scheduling trace of the run, so the caller can
    persist or show the per-filter and per-claim detail.
    """

    def __init__(self, message: str, trace: 'SchedulingTrace | None' = None) -> None:
        super().__init__(message)
        self.trace = trace
