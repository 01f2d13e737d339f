"""Give each compute node record its failure domains: level -> the Placement aggregate it is in.

Operators describe racks, rows, rooms (any level names) as Placement
aggregates. Given each node provider's aggregates (from Placement) and the
level each failure-domain aggregate stands for (from the operator), this sets
``CellNodeRecord.failure_domains``. Aggregates with no level (zones,
pools) are not failure domains. A node found in two aggregates of one level
is misdescribed: it gets no domain at that level, so anti-affinity at that
level refuses it rather than guessing, and the conflict is reported.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Iterable, Mapping

from scheduler.host_state import CellNodeRecord

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class DomainConflict:
    node_uuid: str
    host: str
    level: str
    aggregates: tuple[str, ...]

    def __str__(self) -> str:
        return (f'compute node {self.host} ({self.node_uuid}) is in several {self.level} '
                f'aggregates ({", ".join(self.aggregates)}); it is given no {self.level} '
                f'until its Placement aggregates are fixed')


def with_failure_domains(records: Iterable[CellNodeRecord],
                         provider_aggregates: Mapping[str, Iterable[str]],
                         levels: Mapping[str, str]
                         ) -> tuple[list[CellNodeRecord], list[DomainConflict]]:
    """(records with ``failure_domains`` set, the conflicts found).

    ``provider_aggregates``: node (provider) UUID -> its Placement aggregates.
    ``levels``: failure-domain aggregate UUID -> its level name ("rack").
    """
    updated, conflicts = [], []
    for record in records:
        by_level: dict[str, set[str]] = {}
        for aggregate in provider_aggregates.get(record.uuid, ()):
            level = levels.get(aggregate)
            if level is not None:
                by_level.setdefault(level, set()).add(aggregate)
        domains = {}
        for level, aggregates in sorted(by_level.items()):
            if len(aggregates) == 1:
                (domains[level],) = aggregates
            else:
                conflict = DomainConflict(record.uuid, record.host, level,
                                          tuple(sorted(aggregates)))
                LOG.warning('%s', conflict)
                conflicts.append(conflict)
        updated.append(dataclasses.replace(record, failure_domains=domains))
    return updated, conflicts
