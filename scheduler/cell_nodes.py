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

Between full reads (``[scheduler] host_full_refresh_interval``, an operator
change, a cell read again) a refresh reads only what changed in a cell: the
node rows written since the last read (with a margin), the compute services
created since, and the services that are down (``read_cell_changes``); the
other nodes keep their records. At rest that is a few rows a cell, not every
node: 5,000 records built every 10 s were most of an idle scheduler's CPU.
Of the rows stamped within the margin, only those whose stamp differs from
the one last read are read whole (the others' uuids and stamps only): after
the hosts' first reports, every row is in the margin for 30 s.
"Since the last read" is since that read began, by the scheduler's clock:
counted from the newest row it showed instead, a cell whose nodes all
registered at once and have not changed since read them all at every
refresh, for as long as nothing newer was written.
"""
from __future__ import annotations

import dataclasses
import datetime
import logging
from typing import Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db import away
from cellplane.db.columns import naive_utc, utcnow
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


# A cell is read again from this long before its last read began: a row a
# transaction stamped a little before it committed, or that a cell
# conductor whose clock is a little behind the scheduler's wrote, is still
# read. The full reads catch anything older.
CHANGE_MARGIN = datetime.timedelta(seconds=30)


@dataclasses.dataclass(frozen=True)
class CellRead:
    """What the last read of one cell gave: its records, and when that read began (UTC)."""

    records: dict[str, CellNodeRecord]
    read_at: datetime.datetime
    # Node uuid -> its row's updated_at as read: the next read of changes
    # skips the rows of its margin that it has already.
    stamps: dict[str, datetime.datetime | None] = dataclasses.field(default_factory=dict)
    # A read of changes: the nodes whose records it made anew (rows read,
    # services up again); None for a read in full.
    changed: frozenset[str] | None = None


def _record(row: compute_nodes.NodeWithService, cell_uuid: str,
            liveness: Liveness) -> CellNodeRecord:
    return CellNodeRecord(
        uuid=row.uuid, host=row.host, nodename=row.nodename, cell_uuid=cell_uuid,
        service_up=not liveness.is_down(row.last_seen_at, row.forced_down),
        service_disabled=row.disabled, disabled_reason=row.disabled_reason,
        availability_zone=row.availability_zone, stats=row.stats)


def read_cell(engine: Engine, cell_uuid: str, *, service_down_time: float,
              now: datetime.datetime | None = None) -> list[CellNodeRecord]:
    """The compute node records of one cell database."""
    return list(read_cell_changes(engine, cell_uuid, None,
                                  service_down_time=service_down_time,
                                  now=now).records.values())


def read_cell_changes(engine: Engine, cell_uuid: str, previous: CellRead | None, *,
                      service_down_time: float,
                      now: datetime.datetime | None = None) -> CellRead:
    """The cell's records: read in full without ``previous``, else only what changed since.

    From ``previous``, only the nodes whose row changed (since
    ``CHANGE_MARGIN`` before ``previous`` was read), whose compute service row is new,
    or whose service is down are read: at rest, with every service up,
    that is the few rows the agents sent again, not every node. The other
    nodes keep their records (a node that was down is up again). If the
    cell counts another number of nodes than that gives (a node was
    deleted), it is read in full.
    """
    liveness = Liveness.at(service_down_time, now)
    read_at = naive_utc(now) if now is not None else utcnow()
    if previous is not None:
        since = min(previous.read_at, read_at) - CHANGE_MARGIN
        count, rows = compute_nodes.changed_with_service(engine, since=since, down=liveness,
                                                         known=previous.stamps)
        stamps = dict(previous.stamps)
        records = {}
        changed = set()
        for uuid, record in previous.records.items():
            if record.service_up:
                records[uuid] = record
            else:
                records[uuid] = dataclasses.replace(record, service_up=True)
                changed.add(uuid)
        for row in rows:
            fresh = _record(row, cell_uuid, liveness)
            old = previous.records.get(row.uuid)
            stamps[row.uuid] = row.updated_at
            if old is None:
                records[row.uuid] = fresh
                changed.add(row.uuid)
                continue
            # Keep what the refresh hung on the record (aggregates, domains).
            fresh = dataclasses.replace(fresh, aggregates=old.aggregates,
                                        failure_domains=old.failure_domains)
            if fresh == old:
                # Read again but the same (a service still down): not a change.
                records[row.uuid] = old
                changed.discard(row.uuid)
            else:
                records[row.uuid] = fresh
                changed.add(row.uuid)
        if count == len(records):
            return CellRead(records, read_at, stamps, frozenset(changed))
    rows = compute_nodes.list_with_service(engine)
    return CellRead({row.uuid: _record(row, cell_uuid, liveness) for row in rows}, read_at,
                    {row.uuid: row.updated_at for row in rows})


def refresh_cache(cache: HostStateCache, cells: Mapping[str, Engine], *,
                  service_down_time: float,
                  now: datetime.datetime | None = None,
                  host_aggregates: HostAggregates | None = None,
                  host_domains: HostDomains | None = None,
                  read_retry_seconds: float = READ_RETRY_SECONDS,
                  reads: dict[str, CellRead] | None = None,
                  full: bool = True) -> dict[str, str]:
    """Re-read every cell into ``cache``; cell UUID -> error for the cells that failed.

    With ``host_aggregates`` (host -> aggregates), each record gets its host's
    aggregates; without, records carry none. With ``host_domains`` (host ->
    level -> domain uuid), each record gets its host's failure domains.

    ``reads`` (cell UUID -> its last read, kept by the caller and updated
    here): with ``full`` false, a cell read before is read for its changes
    only (``read_cell_changes``); a cell is read in full otherwise, and
    after it could not be read. A read of changes keeps the aggregates and
    domains already hung on the records it did not make anew, so with
    ``full`` false the caller passes the maps it passed last (an operator
    change to them is a full refresh); and when no cell changed, the cache
    is left as it is: at rest a refresh costs the reads, not a pass over
    every host.
    """
    reads = {} if reads is None else reads
    previous: dict[str, list[CellNodeRecord]] | None = None

    def kept_of(cell_uuid: str) -> list[CellNodeRecord]:
        """The records the cache holds of the cell (grouped once, when first needed)."""
        nonlocal previous
        if previous is None:
            previous = {}
            for record in cache.records():
                previous.setdefault(record.cell_uuid, []).append(record)
        return previous.get(cell_uuid, [])

    records: list[CellNodeRecord] = []
    failed: dict[str, str] = {}
    # This refresh's reads: they replace ``reads`` only once the cache holds
    # their records, so a refresh that raises half way leaves the two in step.
    new_reads: dict[str, CellRead] = {}
    # Nodes whose records were made anew and need the maps hung on (None: all).
    fresh: set[str] | None = None if full else set()
    for cell_uuid, engine in cells.items():
        # A cell whose last read failed has no read kept (dropped below).
        unreadable = (cell_uuid not in reads
                      and any(r.cell_unreadable for r in kept_of(cell_uuid)))
        last = None if full or unreadable else reads.get(cell_uuid)
        try:
            read = away.retry_while_away(
                lambda engine=engine, cell_uuid=cell_uuid, last=last: read_cell_changes(
                    engine, cell_uuid, last, service_down_time=service_down_time,
                    now=now),
                timeout=read_retry_seconds)
        except sa.exc.SQLAlchemyError as exc:
            kept = kept_of(cell_uuid)
            why = away.first_line(exc)
            failed[cell_uuid] = f'{type(exc).__name__}: {why}'
            records.extend(dataclasses.replace(r, cell_unreadable=why) for r in kept)
            fresh = None
            if not unreadable:
                LOG.warning('Could not read the compute nodes of cell %s; its %d '
                            'node(s) are not offered until it is read again: %s',
                            cell_uuid, len(kept), why)
            continue
        new_reads[cell_uuid] = read
        records.extend(read.records.values())
        if fresh is not None:
            if read.changed is None:
                fresh = None    # read in full (new, read again, or a node deleted)
            else:
                fresh |= read.changed
        if unreadable:
            LOG.info('Cell %s is read again; its nodes are offered again', cell_uuid)
    gone = set(reads) - set(cells)
    if fresh is not None and not fresh and not gone:
        # Nothing changed: the cache holds these very records.
        reads.update(new_reads)
        return failed
    # The records the maps were hung on (all of them after a full read).
    if fresh is None:
        records = _hang(records, host_aggregates, host_domains)
        hung = {r.uuid: r for r in records}
    else:
        hung = {r.uuid: r for r in _hang([r for r in records if r.uuid in fresh],
                                         host_aggregates, host_domains)}
        records = [hung.get(r.uuid, r) for r in records]
    cache.set_records(records)
    for cell_uuid in [*gone, *failed]:
        reads.pop(cell_uuid, None)
    for cell_uuid, read in new_reads.items():
        # The next read of the cell starts from the records as the cache
        # holds them (each read's dict is its own: changed in place).
        for uuid in hung.keys() & read.records.keys():
            read.records[uuid] = hung[uuid]
        reads[cell_uuid] = read
    return failed


def _hang(records: list[CellNodeRecord], host_aggregates: HostAggregates | None,
          host_domains: HostDomains | None) -> list[CellNodeRecord]:
    """``records`` with their hosts' aggregates and failure domains, where those are given."""
    if host_aggregates is not None:
        records = with_aggregates(records, host_aggregates)
    if host_domains is not None:
        records = with_failure_domains(records, host_domains)
    return records
