"""Read the compute nodes of every cell, with their service's liveness, into the host cache.

The scheduler reads each cell database downward (compute_nodes joined with
the ``cellplane-compute`` row of ``services``). A node is up when its
service's last heartbeat is younger than ``[service] service_down_time``; a
node whose service never reported, or was forced down, is down. A cell whose
database is away is read again for ``READ_RETRY_SECONDS`` first: a restart,
or connections killed under the pool, is not a reason to stop offering it.
A cell whose database cannot be read then keeps the records last read from
it, marked with why (``cell_unreadable``): ComputeFilter offers none of
them until the cell is read again, so one unreachable cell neither stops
scheduling in the others nor keeps being chosen. The failure is logged once per outage of that cell,
and its end once.
"""
from __future__ import annotations

import dataclasses
import datetime
import logging
from typing import Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db import away
from cellplane.objects import compute_nodes
from cellplane.objects.services import Liveness
from scheduler.failure_domains import HostDomains, with_failure_domains
from scheduler.host_aggregates import HostAggregates, with_aggregates
from scheduler.host_cache import HostStateCache
from scheduler.host_state import CellNodeRecord

LOG = logging.getLogger(__name__)

# How long a cell whose database is away is read again before its nodes
# stop being offered (the super conductor writes into it again meanwhile).
READ_RETRY_SECONDS = 5.0


def read_cell(engine: Engine, cell_uuid: str, *, service_down_time: float,
              now: datetime.datetime | None = None) -> list[CellNodeRecord]:
    """The compute node records of one cell database."""
    liveness = Liveness.at(service_down_time, now)
    return [CellNodeRecord(
        uuid=row.uuid, host=row.host, nodename=row.nodename, cell_uuid=cell_uuid,
        service_up=not liveness.is_down(row.last_seen_at, row.forced_down),
        service_disabled=row.disabled, disabled_reason=row.disabled_reason,
        availability_zone=row.availability_zone, stats=row.stats)
        for row in compute_nodes.list_with_service(engine)]


def refresh_cache(cache: HostStateCache, cells: Mapping[str, Engine], *,
                  service_down_time: float,
                  now: datetime.datetime | None = None,
                  host_aggregates: HostAggregates | None = None,
                  host_domains: HostDomains | None = None,
                  read_retry_seconds: float = READ_RETRY_SECONDS) -> dict[str, str]:
    """Re-read every cell into ``cache``; cell UUID -> error for the cells that failed.

    With ``host_aggregates`` (host -> aggregates), each record gets its host's
    aggregates; without, records carry none. With ``host_domains`` (host ->
    level -> domain uuid), each record gets its host's failure domains.
    """
    previous: dict[str, list[CellNodeRecord]] = {}
    for record in cache.records():
        previous.setdefault(record.cell_uuid, []).append(record)
    records: list[CellNodeRecord] = []
    failed: dict[str, str] = {}
    for cell_uuid, engine in cells.items():
        try:
            records.extend(away.retry_while_away(
                lambda engine=engine, cell_uuid=cell_uuid: read_cell(
                    engine, cell_uuid, service_down_time=service_down_time, now=now),
                timeout=read_retry_seconds))
        except sa.exc.SQLAlchemyError as exc:
            why = away.first_line(exc)
            failed[cell_uuid] = f'{type(exc).__name__}: {why}'
            kept = previous.get(cell_uuid, [])
            records.extend(dataclasses.replace(r, cell_unreadable=why) for r in kept)
            if not any(r.cell_unreadable for r in kept):
                LOG.warning('Could not read the compute nodes of cell %s; its %d '
                            'node(s) are not offered until it is read again: %s',
                            cell_uuid, len(kept), why)
            continue
        if any(r.cell_unreadable for r in previous.get(cell_uuid, [])):
            LOG.info('Cell %s is read again; its nodes are offered again', cell_uuid)
    if host_aggregates is not None:
        records = with_aggregates(records, host_aggregates)
    if host_domains is not None:
        records = with_failure_domains(records, host_domains)
    cache.set_records(records)
    return failed
