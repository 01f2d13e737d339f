"""What a scheduling-record backend does: store a record, find records again.

Backends are stevedore plugins (namespace ``cellplane.scheduler.records``),
each built by ``from_conf(conf)``. ``write`` is called from the record
writer's thread only; ``find`` from the CLI (another process).
"""
from __future__ import annotations

import abc
import dataclasses

from oslo_config import cfg

from scheduler.records.record import SchedulingRecord


class RecordBackendError(Exception):
    """A backend cannot be used as configured (file not writable, no database...)."""


@dataclasses.dataclass(frozen=True)
class RecordQuery:
    """Which records to find: newest first, at most ``last``."""

    last: int = 20
    request_id: str | None = None
    instance_uuid: str | None = None

    def matches(self, record: SchedulingRecord) -> bool:
        if self.request_id and record.request_id != self.request_id:
            return False
        if self.instance_uuid and self.instance_uuid not in record.instance_uuids:
            return False
        return True


class RecordBackend(abc.ABC):
    @classmethod
    @abc.abstractmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> 'RecordBackend':
        """The backend as ``[scheduler]`` configures it."""

    @abc.abstractmethod
    def write(self, records: list[SchedulingRecord]) -> None:
        """Store ``records`` (oldest first)."""

    @abc.abstractmethod
    def find(self, query: RecordQuery) -> list[SchedulingRecord]:
        """The newest records matching ``query``, newest first."""

    def close(self) -> None:  # noqa: B027 - a backend holding nothing has nothing to release
        """Release files or connections."""
