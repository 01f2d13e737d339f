"""Give each compute node record its failure domains (level -> domain uuid), from the API database.

Operators describe racks, rows, rooms (level names of their own) with
``cellplane failure-domain``; the API database keeps each domain with its
hosts, at most one domain per level and host, and each domain's uuid is a
Placement aggregate of its hosts' providers (``cellplane.objects
.failure_domains``). ``read_host_domains`` reads them in one query per host
refresh and ``with_failure_domains`` hangs them on the compute node records,
so that (anti-)affinity at a level compares domain uuids and can ask
Placement for ``member_of`` a domain. ``record_levels`` records the levels a
scheduler was started with (``[scheduler] failure_domain_levels``): the CLI
accepts only those.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Iterable, Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.objects import failure_domains
from scheduler.host_state import CellNodeRecord

LOG = logging.getLogger(__name__)

HostDomains = Mapping[str, Mapping[str, str]]


class LevelsNotRecorded(Exception):
    """The API database could not be written (unreachable, or its schema is older)."""


def record_levels(api_engine: Engine, levels: Sequence[str]) -> None:
    """Record the levels in the API database.

    Raises ``cellplane.objects.failure_domains.FailureDomainError`` (levels
    the existing domains do not fit, or a malformed name) and
    ``LevelsNotRecorded``.
    """
    try:
        changed = failure_domains.record_levels(api_engine, levels)
    except sa.exc.SQLAlchemyError as exc:
        raise LevelsNotRecorded(
            f'cannot record [scheduler] failure_domain_levels in the API database '
            f'([api_database] connection; an older schema needs `cellplane-manage db '
            f'sync --database api`): {str(exc).splitlines()[0]}') from exc
    if changed:
        LOG.info('Failure-domain levels recorded, smallest first: %s',
                 ', '.join(levels) or 'none')


def read_host_domains(api_engine: Engine) -> dict[str, dict[str, str]]:
    """Host -> level -> its domain's uuid, for every host in a domain.

    Raises ``sqlalchemy.exc.SQLAlchemyError`` when the API database cannot be read.
    """
    return failure_domains.host_domains(api_engine)


def with_failure_domains(records: Iterable[CellNodeRecord],
                         host_domains: HostDomains) -> list[CellNodeRecord]:
    """``records`` with each node's failure domains replaced by its host's (a record unchanged is kept)."""
    return [r if r.failure_domains == (found := host_domains.get(r.host, {}))
            else dataclasses.replace(r, failure_domains=dict(found))
            for r in records]
