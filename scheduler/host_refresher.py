"""Keeps the scheduler's host cache filled from the cell databases, and follows the list of cells.

``HostRefresher`` re-reads every enabled cell's compute nodes into the
``HostStateCache`` every ``interval`` seconds on its own thread, and on
``reload_cells`` (a SIGHUP) re-reads the cell mappings first. A periodic
refresh reads only what changed in each cell since its last read (the
nodes written, the services new or down: ``cell_nodes.read_cell_changes``);
every ``full_interval`` seconds (``[scheduler] host_full_refresh_interval``),
after an operator change (the stamp below) and at a reload it reads every node. A cell that
cannot be read keeps its previous records (see ``cell_nodes``); a cell that
was removed or disabled drops out of the cache at the next refresh. Each
full read also reads the host aggregates and the hosts' failure domains from
the API database (one query each) and hangs them on the records (a read of
changes hangs them on the records it made anew only, and leaves the cache
as it is when nothing changed); if a read fails, what was last read is
used, the failure is logged, and they are read again at the next refresh. Hosts seen for the first time are mapped to
their cell in the API database (``host_mappings``), as Nova's discover_hosts
does: the top level, which reads every cell, writes them, never a cell
service.

``follow_changes`` (called before every request) reads the API database's
``scheduling`` change stamp, which every operator change to aggregates,
zones, failure domains, cell mappings or a compute service's disabled flag
raises, and when it moved since the last refresh re-reads the cell
mappings and the hosts first: a change is applied at the next request of
every worker, with no message to lose; the periodic refresh stays as the
safety net (and follows what no stamp covers: heartbeats, new nodes).
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

import sqlalchemy as sa

from cellplane.cells.databases import CellDatabases
from cellplane.objects import cell_mappings, change_stamps, host_mappings
from cellplane.periodic import PeriodicTask
from scheduler import cell_nodes
from scheduler.failure_domains import HostDomains, read_host_domains
from scheduler.host_aggregates import HostAggregates, read_host_aggregates
from scheduler.host_cache import HostStateCache

LOG = logging.getLogger(__name__)


class HostRefresher:
    def __init__(self, cache: HostStateCache, cells: CellDatabases, *,
                 service_down_time: float, interval: float,
                 full_interval: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._cache = cache
        self._cells = cells
        self._service_down_time = service_down_time
        self._interval = interval
        # Seconds between two full reads of every cell (0: every refresh is one).
        self._full_interval = full_interval
        self._clock = clock
        self._full_after: float | None = None
        # Cell UUID -> its last read, from which the next reads only what changed.
        self._reads: dict[str, cell_nodes.CellRead] = {}
        # One refresh at a time: a SIGHUP refresh racing the periodic one
        # could otherwise write an older read over a newer one.
        self._refresh_lock = threading.Lock()
        self._task: PeriodicTask | None = None
        self._host_aggregates: HostAggregates = {}
        self._host_domains: HostDomains = {}
        # A read of the aggregates or the domains failed: read them again at
        # the next refresh, and hang them on every record then.
        self._maps_stale = False
        self._mapped_hosts: set[str] = set()
        # The change stamp the cache was last read after (None: unknown).
        self._stamp: int | None = None

    def follow_changes(self) -> bool:
        """Re-read cells and hosts if the operator changed them since the last read; True if so.

        One primary-key read of the API database. If it cannot be read the
        cache is used as it is (the periodic refresh says why).
        """
        try:
            stamp = change_stamps.read(self._cells.api_engine)
        except sa.exc.SQLAlchemyError as exc:
            LOG.debug('Could not read the change stamp: %s', exc)
            return False
        if stamp == self._stamp:
            return False
        with self._refresh_lock:
            if stamp == self._stamp:
                return False   # another request's refresh read it meanwhile
            try:
                self._cells.reload()
                self._refresh_locked(full=True)
            except sa.exc.SQLAlchemyError as exc:
                LOG.warning('Could not re-read the cells after an operator change '
                            '(stamp %s); scheduling with the hosts read before: %s',
                            stamp, exc)
                return False
        LOG.info('Host cache re-read at a request: an operator change (stamp %s) '
                 'to aggregates, zones, failure domains, services or cells', stamp)
        return True

    def refresh(self, *, full: bool = False) -> dict[str, str]:
        """Read every enabled cell now; cell UUID -> error for those that failed.

        Only what changed in each cell since its last read, unless ``full``,
        a full read is due (``full_interval``) or the change stamp moved.
        """
        with self._refresh_lock:
            failed = self._refresh_locked(full=full)
        records = self._cache.records()
        LOG.debug('Host cache refreshed: %d compute node(s), %d up; %d cell(s) unreadable',
                  len(records), sum(1 for r in records if r.service_up), len(failed))
        self._map_new_hosts()
        return failed

    def _refresh_locked(self, *, full: bool = False) -> dict[str, str]:
        """Read the cells: in full if ``full``, if due, or after an operator change; else their changes."""
        # The stamp is read before the data: a change committed while
        # reading is then either in the data or seen at the next request.
        try:
            stamp: int | None = change_stamps.read(self._cells.api_engine)
        except sa.exc.SQLAlchemyError:
            stamp = None
        now = self._clock()
        # An operator change (disabled, forced down, a service or cell
        # deleted) is not in the rows a read of changes finds: read all.
        full = (full or stamp is None or stamp != self._stamp or self._full_after is None
                or now >= self._full_after)
        if self._maps_stale:
            full = True   # the maps read now must be hung on every record
        if full:
            # Aggregates and failure domains change by an operator's hand,
            # which moves the stamp: between full reads the records keep theirs.
            self._maps_stale = False
            self._read_host_aggregates()
            self._read_host_domains()
        failed = cell_nodes.refresh_cache(
            self._cache, self._cells.enabled_engines(),
            service_down_time=self._service_down_time,
            host_aggregates=self._host_aggregates,
            host_domains=self._host_domains,
            reads=self._reads, full=full)
        if full:
            self._full_after = now + self._full_interval
        self._stamp = stamp
        return failed

    def _map_new_hosts(self) -> None:
        """Map the hosts this refresher has not mapped yet (one write only when there are some)."""
        by_cell: dict[str, set[str]] = {}
        for record in self._cache.records():
            if record.host not in self._mapped_hosts:
                by_cell.setdefault(record.cell_uuid, set()).add(record.host)
        for cell_uuid, hosts in by_cell.items():
            try:
                with self._cells.api_engine.begin() as conn:
                    mapped = host_mappings.map_hosts(
                        conn, cell_mappings.id_of(conn, cell_uuid), hosts)
            except (sa.exc.SQLAlchemyError, LookupError) as exc:
                LOG.warning('Could not map hosts %s to cell %s: %s; trying again at the '
                            'next refresh', ', '.join(sorted(hosts)), cell_uuid, exc)
                continue
            if mapped:
                LOG.info('Mapped %d new host(s) to cell %s: %s', len(mapped), cell_uuid,
                         ', '.join(mapped))
            self._mapped_hosts |= hosts

    def _read_host_aggregates(self) -> HostAggregates:
        try:
            self._host_aggregates = read_host_aggregates(self._cells.api_engine)
        except sa.exc.SQLAlchemyError as exc:
            self._maps_stale = True
            LOG.warning('Could not read the host aggregates from the API database; '
                        'scheduling keeps using those read before (%d host(s)): %s',
                        len(self._host_aggregates), exc)
        return self._host_aggregates

    def _read_host_domains(self) -> HostDomains:
        try:
            self._host_domains = read_host_domains(self._cells.api_engine)
        except sa.exc.SQLAlchemyError as exc:
            self._maps_stale = True
            LOG.warning('Could not read the failure domains from the API database; '
                        'scheduling keeps using those read before (%d host(s)): %s',
                        len(self._host_domains), exc)
        return self._host_domains

    def reload_cells(self) -> None:
        """Re-read the cell mappings, then every node of every enabled cell."""
        cells = self._cells.reload()
        enabled = [c for c in cells if not c.disabled]
        LOG.info('Scheduling to %d enabled cell(s): %s', len(enabled),
                 ', '.join(c.name for c in enabled) or 'none')
        self.refresh(full=True)

    def start(self) -> None:
        """Read the cells and their nodes now, then refresh every ``interval`` seconds."""
        self.reload_cells()
        self._task = PeriodicTask('scheduler-host-refresh', self._interval, self.refresh)
        self._task.start()

    def stop(self) -> None:
        if self._task is not None:
            self._task.stop()
            self._task = None
