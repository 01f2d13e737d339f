"""Resuming the boots a dead super conductor left, or that no super conductor picked up.

A super conductor's boot message is acknowledged when it is received, so
one that dies mid-boot takes the message with it; what it leaves is in the
API database (ARCHITECTURE.md, "A super conductor that dies during a
boot"). ``Resumption.run`` (at start and every ``[conductor]
resume_interval``) finds those build requests (``build_request_leases.orphans``),
takes each over with a compare-and-set on its lease (of several super
conductors, one wins), removes what the lost run may have made of it (the
instance written into any cell before its mapping was pointed there; its
Placement claim, keyed by the instance) and has the super conductor
schedule and build the boot's instances again, together: the outage is a
delay. If a cell cannot be cleaned, the leases are given back and the next
look tries again. A request the user deleted while it was held is undone
and removed instead of being scheduled.
"""
from __future__ import annotations

import datetime
import json
import logging

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.context import new_context
from cellplane.objects import build_request_leases, build_requests
from conductor import metrics
from conductor.super import cell_writes
from conductor.super.manager import SuperConductorManager

LOG = logging.getLogger(__name__)


class Resumption:
    """Finds the orphaned boots and resumes them through ``manager``, under its lease."""

    def __init__(self, manager: SuperConductorManager, *, api_engine: Engine,
                 cells: CellDatabases, binary: str, service_down_time: float,
                 unleased_for: float) -> None:
        self._manager = manager
        self._api_engine = api_engine
        self._cells = cells
        self._binary = binary
        self._service_down_time = service_down_time
        self._unleased_for = unleased_for

    def run(self) -> int:
        """Schedule again what a dead super conductor left, or what none picked up; how many instances."""
        holder = self._manager.lease
        found = build_request_leases.orphans(
            self._api_engine, holder=holder, binary=self._binary,
            service_down_time=self._service_down_time, unleased_for=self._unleased_for)
        # The instances of one boot share their request spec: resumed together,
        # as the boot asked (all or nothing, one scheduling).
        boots: dict[str, list[build_request_leases.Orphan]] = {}
        for orphan in found:
            key = json.dumps(orphan.request_spec.to_primitive(), sort_keys=True)
            boots.setdefault(key, []).append(orphan)
        resumed = 0
        for orphans in boots.values():
            taken = [o for o in orphans
                     if build_request_leases.take_over(self._api_engine, o, holder)]
            if taken:
                resumed += self._resume(taken)
        return resumed

    def _resume(self, orphans: list[build_request_leases.Orphan]) -> int:
        manager = self._manager
        uuids = [o.instance_uuid for o in orphans]
        LOG.warning('Resuming the build of %s: %s', ', '.join(uuids), orphans[0].why)
        try:
            # The lost run may have written the instance into a cell (before
            # it could point the mapping there) and claimed for it.
            for cell in self._cells.reload():
                engine = self._cells.engine(cell.uuid)
                for uuid in uuids:
                    cell_writes.withdraw(engine, uuid)
        except sa.exc.SQLAlchemyError as exc:
            LOG.warning('Not resuming %s yet: a cell database could not be cleaned '
                        'of what the lost run wrote (%s); trying again later',
                        ', '.join(uuids), str(exc).splitlines()[0])
            manager.release(uuids)
            return 0
        # Through the manager's own undo, so that a claim that cannot be
        # removed (or a deleted request not forgotten) is logged and left
        # exactly as for the manager's own boots.
        for uuid in uuids:
            manager._unclaim(uuid)
        requests = build_requests.get_many(self._api_engine, uuids)
        deleted = manager._forget_deleted([u for u in uuids if u not in requests])
        if deleted:
            LOG.info('Removed what the lost run had made of %s, deleted by the user '
                     'meanwhile', ', '.join(deleted))
        uuids = [u for u in uuids if u in requests]
        metrics.INSTANCES_TAKEN.labels('resume').inc(len(uuids))
        if uuids:
            manager.build_held(new_context(), orphans[0].request_spec,
                               {u: requests[u] for u in uuids},
                               datetime.datetime.now(datetime.timezone.utc))
        return len(uuids)
