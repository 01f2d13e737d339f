"""Why the scheduler could not do what it was asked: the exceptions it raises.

Each message is written for an operator: it names the flavor key, the
filter or the counts that explain the failure.
"""
from __future__ import annotations

import re
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
    persist or show the per-filter and per-claim detail. The message is
    built by ``scheduler.no_valid_host``; it starts with ``head``.
    """

    def __init__(self, message: str, trace: 'SchedulingTrace | None' = None) -> None:
        super().__init__(message)
        self.trace = trace

    @staticmethod
    def head(instance_uuid: str, position: int, count: int) -> str:
        """``No valid host for instance U (2 of 3)``: how every message starts."""
        return f'No valid host for instance {instance_uuid} ({position} of {count})'

    def for_member(self, instance_uuid: str, position: int, count: int) -> str:
        """The fault of instance ``position`` of ``count`` of the request: it names that instance.

        A multi-create is placed whole or not at all: the members other
        than the one that found no host failed because of it, and say so.
        """
        found = _HEAD_RE.match(str(self))
        if found is None or found['uuid'] == instance_uuid:
            return str(self)
        return (f'{self.head(instance_uuid, position, count)}: not placed, as the request '
                f'places all its instances or none, and its instance {found["position"]} '
                f'of {found["count"]} found no host{found["rest"]}')


_HEAD_RE = re.compile(r'No valid host for instance (?P<uuid>\S+) '
                      r'\((?P<position>\d+) of (?P<count>\d+)\)(?P<rest>.*)\Z', re.S)
