"""Read the host aggregates of every host from the API database, for the host cache.

``read_host_aggregates`` is one query per host refresh (not one per host):
host name -> the aggregates it is in, each with its metadata, ordered by
aggregate name. ``with_aggregates`` hangs them on the compute node records
read from the cells; a host's zone then comes from its aggregates'
``availability_zone`` (``HostState.availability_zone``).
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping

from sqlalchemy.engine import Engine

from cellplane.objects import aggregates
from scheduler.host_state import CellNodeRecord, HostAggregate

HostAggregates = Mapping[str, tuple[HostAggregate, ...]]


def read_host_aggregates(api_engine: Engine) -> dict[str, tuple[HostAggregate, ...]]:
    """Host name -> its aggregates (with metadata), for every host in an aggregate.

    Raises ``sqlalchemy.exc.SQLAlchemyError`` when the API database cannot be read.
    """
    by_host: dict[str, list[HostAggregate]] = {}
    # Hosts share aggregates: build each aggregate once.
    built: dict[str, HostAggregate] = {}
    for row in aggregates.memberships(api_engine):
        aggregate = built.get(row.aggregate_uuid)
        if aggregate is None:
            aggregate = built[row.aggregate_uuid] = HostAggregate(
                uuid=row.aggregate_uuid, name=row.aggregate_name, metadata=dict(row.metadata))
        by_host.setdefault(row.host, []).append(aggregate)
    return {host: tuple(found) for host, found in by_host.items()}


def with_aggregates(records: Iterable[CellNodeRecord],
                    host_aggregates: HostAggregates) -> list[CellNodeRecord]:
    """``records`` with each node's aggregates replaced by those of its host.

    A record whose aggregates are already those is kept as it is: most hosts
    of a large cloud are in no aggregate, and copying every record at every
    refresh was a fifth of the refresh's cost at 1,000 hosts.
    """
    return [r if r.aggregates == (found := host_aggregates.get(r.host, ()))
            else dataclasses.replace(r, aggregates=found)
            for r in records]
