"""Placement against the instances: allocations nobody should hold, and ACTIVE instances holding none.

What is live is read from the API database (build requests) and every
cell's database (instances); what is held, from Placement. A consumer may
hold allocations while its instance is being scheduled (a build request not
failed) or built or running (BUILD or ACTIVE in its cell). Anything else
holding allocations is a leak: no instance and no build request at all, an
instance DELETED or in ERROR, a build request that failed. An ACTIVE
instance that holds nothing is missing its claim. A migration's consumer
(the source host's allocation of a moving instance) is live while its
migration is in progress (queued, pre-migrating, migrating, or finished and
waiting for confirm or revert) and its instance not deleted; it is leaked
once the migration ended (confirmed, reverted, error, done, failed,
cancelled: whoever ended it should have removed or moved it back) or the
instance is gone, and the finding names the migration's ending. An
evacuation ``done`` is not over for this purpose: its consumer holds the
dead source host's allocation until that host comes back and cleans up
(``completed``).

``fix`` removes the leaks (unclaim, which is idempotent) and claims each
missing one again with its flavor's Placement resources (as the scheduler
asked for them) on its node's provider. Instances that
changed state, or build requests made, less than ``grace`` seconds ago are
left alone: a claim and
the row that explains it are not written in one transaction, so a very new
consumer may be caught between the two.

Every cell must be readable: with one cell silent, its instances' claims
would look leaked, so the audit refuses instead of guessing.
"""
from __future__ import annotations

import dataclasses
import datetime
import logging
from typing import Callable

from cellplane.cells.databases import CellDatabases
from cellplane.db.columns import naive_utc, utcnow
from cellplane.objects import build_requests, compute_nodes, instances, migrations
from placement.client import PlacementClient
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, BUILDING, DELETED, ERROR

LOG = logging.getLogger(__name__)

LEAKED = 'leaked'
MISSING = 'missing'


class AuditRefused(Exception):
    """The audit cannot tell live from leaked (a cell cannot be read)."""


@dataclasses.dataclass(frozen=True)
class Finding:
    """One consumer whose allocations disagree with its instance."""

    kind: str                         # LEAKED or MISSING
    consumer: str
    reason: str
    cell: str | None
    held: dict[str, dict[str, int]]   # provider uuid -> resources (LEAKED)
    fixed: bool = False


@dataclasses.dataclass(frozen=True)
class _Live:
    state: str
    cell: str
    changed_at: datetime.datetime | None
    row: dict


def audit(api_engine, cells: CellDatabases, placement: PlacementClient, *,
          grace: float = 300.0, fix: bool = False,
          progress: Callable[[int, int], None] | None = None) -> list[Finding]:
    """The findings, oldest consumer first; with ``fix``, each one repaired and marked ``fixed``."""
    known: dict[str, _Live] = {}
    moving: dict[str, tuple[migrations.Migration, str]] = {}
    engines = {}
    for mapping in cells.reload():
        engine = cells.engine(mapping.uuid)
        engines[mapping.name] = engine
        try:
            with engine.connect() as conn:
                rows = instances.list_all(conn)
                moving.update((m.uuid, (m, mapping.name)) for m in migrations.find(conn))
        except Exception as exc:  # noqa: BLE001 - any failure: the cell cannot be read
            raise AuditRefused(
                f'cell {mapping.name} cannot be read ({type(exc).__name__}: '
                f'{(str(exc).splitlines() or [""])[0]}); its instances\' claims would '
                f'look leaked, so nothing was audited') from None
        for row in rows:
            # The last change of state: a just-deleted instance's terminate
            # may still be removing its claim.
            known[row['uuid']] = _Live(row['vm_state'], mapping.name,
                                       row['updated_at'] or row['created_at'], row)
    pending = {r.instance.uuid: r for r in build_requests.list_all(api_engine)}
    held = placement.allocations_by_consumer(progress)
    now = utcnow()

    def young(created: datetime.datetime | None) -> bool:
        return created is not None and (now - naive_utc(created)).total_seconds() < grace

    findings = []
    for consumer, by_provider in sorted(held.items()):
        live = known.get(consumer)
        request = pending.get(consumer)
        if consumer in moving:
            migration, cell = moving[consumer]
            of = known.get(migration.instance_uuid)
            gone = of is None or of.state == DELETED
            holds = not migration.final or migrations.awaits_cleanup(migration)
            if (holds and not gone) or young(migration.updated_at):
                continue
            state = (f'ended {migration.status}' if migration.final
                     else f'is {migration.status}')
            findings.append(Finding(LEAKED, consumer, f'its {migration.migration_type} '
                                    f'(of instance {migration.instance_uuid}) {state}'
                                    f'{" and the instance is gone" if gone else ""}',
                                    cell, by_provider))
        elif live is not None:
            if live.state in (BUILDING, ACTIVE):
                continue
            reason = f'its instance is {live.state} in cell {live.cell}'
            if live.state not in (DELETED, ERROR) or young(live.changed_at):
                continue
            findings.append(Finding(LEAKED, consumer, reason, live.cell, by_provider))
        elif request is not None:
            if not request.failed or young(request.created_at):
                continue
            findings.append(Finding(LEAKED, consumer, 'its build request failed: '
                                    f'{request.fault_message}', None, by_provider))
        else:
            findings.append(Finding(LEAKED, consumer, 'no instance and no build request '
                                    'has this uuid', None, by_provider))
    for consumer, live in sorted(known.items()):
        if live.state == ACTIVE and consumer not in held and not young(live.changed_at):
            findings.append(Finding(MISSING, consumer, f'ACTIVE on {live.row["host"]} in '
                                    f'cell {live.cell} with no allocation', live.cell, {}))
    if fix:
        findings = [_fix(f, known, engines, placement) for f in findings]
    return findings


def _fix(finding: Finding, known: dict[str, _Live], engines, placement) -> Finding:
    if finding.kind == LEAKED:
        placement.unclaim(finding.consumer)
        return dataclasses.replace(finding, fixed=True)
    row = known[finding.consumer].row
    node = compute_nodes.node_of(engines[finding.cell], row['host'], row['node'])
    if node is None:
        return finding
    resources = Flavor.from_primitive(row['flavor']).placement_resources()
    placement.claim(finding.consumer, {node: resources},
                    project_id=row['project_id'], user_id=row['user_id'])
    return dataclasses.replace(finding, fixed=True)


class PeriodicAudit:
    """The audit with ``fix`` as the super conductor's periodic task: each fix logged and counted."""

    def __init__(self, api_engine, cells: CellDatabases, placement: PlacementClient, *,
                 grace: float) -> None:
        self._api_engine = api_engine
        self._cells = cells
        self._placement = placement
        self._grace = grace
        self.fixed = {LEAKED: 0, MISSING: 0}

    def run(self) -> list[Finding]:
        try:
            findings = audit(self._api_engine, self._cells, self._placement,
                             grace=self._grace, fix=True)
        except AuditRefused as exc:
            LOG.warning('Placement audit skipped: %s', exc)
            return []
        for finding in findings:
            if finding.fixed:
                self.fixed[finding.kind] += 1
                LOG.warning('Placement audit fixed %s %s: %s', finding.kind,
                            finding.consumer, finding.reason)
        if findings:
            LOG.info('Placement audit: %d leaked and %d missing allocation(s) fixed so far',
                     self.fixed[LEAKED], self.fixed[MISSING])
        return findings
