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

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db.api.models import aggregate_hosts, aggregates
from scheduler.host_state import ComputeNodeRecord, HostAggregate

HostAggregates = Mapping[str, tuple[HostAggregate, ...]]


def read_host_aggregates(api_engine: Engine) -> dict[str, tuple[HostAggregate, ...]]:
    """Host name -> its aggregates (with metadata), for every host in an aggregate.

    Raises ``sqlalchemy.exc.SQLAlchemyError`` when the API database cannot be read.
    """
    query = (sa.select(aggregate_hosts.c.host, aggregates.c.uuid, aggregates.c.name,
                       aggregates.c.metadata)
             .select_from(aggregate_hosts.join(
                 aggregates, aggregates.c.id == aggregate_hosts.c.aggregate_id))
             .order_by(aggregate_hosts.c.host, aggregates.c.name))
    by_host: dict[str, list[HostAggregate]] = {}
    # Hosts share aggregates: build each aggregate once.
    built: dict[str, HostAggregate] = {}
    with api_engine.connect() as conn:
        for row in conn.execute(query):
            aggregate = built.get(row.uuid)
            if aggregate is None:
                aggregate = built[row.uuid] = HostAggregate(
                    uuid=row.uuid, name=row.name,
                    metadata={str(k): str(v) for k, v in (row.metadata or {}).items()})
            by_host.setdefault(row.host, []).append(aggregate)
    return {host: tuple(found) for host, found in by_host.items()}


def with_aggregates(records: Iterable[ComputeNodeRecord],
                    host_aggregates: HostAggregates) -> list[ComputeNodeRecord]:
    """``records`` with each node's aggregates replaced by those of its host."""
    return [dataclasses.replace(r, aggregates=host_aggregates.get(r.host, ()))
            for r in records]
