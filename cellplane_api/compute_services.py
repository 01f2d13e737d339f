"""The services of every database, found and changed: the one implementation behind
``cellplane-manage service`` and the compute API's ``os-services``.

    found = locate(api_engine, cells, timeout)               # every service, and the unread cells
    changed = set_disabled(api_engine, one, disabled=True, reason='maintenance', placement=client)
    changed = set_forced_down(api_engine, one, forced_down=True)

Top-level services (schedulers, super conductors) are rows of the API
database; a cell's (its conductor, its compute agents) rows of that cell's.
Disabling a compute service marks its row disabled (the scheduler's
ComputeFilter skips it, naming the reason) and puts
``COMPUTE_STATUS_DISABLED`` on its nodes' providers in Placement, so that
Placement no longer offers them (``cellplane/traits.py``); enabling undoes
both. Forcing a service down makes it down whatever its heartbeats say
(``cellplane/objects/services.py``, ``Liveness``): the scheduler skips the
host and the cell conductor treats its builds as stalled. Each change
raises the scheduling change stamp, so every scheduler re-reads its hosts at
its next request. The database change is kept when Placement cannot be
told: ``Changed.placement_error`` says why, and doing it again finishes it.
"""
from __future__ import annotations

import dataclasses
import logging

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.cells.scatter_gather import CellTimeout, gather
from cellplane.objects import (
    aggregates,
    change_stamps,
    compute_nodes,
    host_mappings,
    instances,
    services,
)
from cellplane.objects.cell_mappings import CellMapping
from cellplane.traits import COMPUTE_STATUS_DISABLED
from placement.client import PlacementClientError, PlacementUnreachable

LOG = logging.getLogger(__name__)
COMPUTE_BINARY = compute_nodes.COMPUTE_BINARY


class ServiceInUse(Exception):
    """A compute service that still hosts instances."""


@dataclasses.dataclass(frozen=True)
class Located:
    """One service row and where it is kept: ``cell`` None is the API database."""

    cell: CellMapping | None
    engine: Engine
    row: dict


@dataclasses.dataclass(frozen=True)
class Found:
    """Every service read, and the cells whose database could not be read (cell -> the error)."""

    services: list[Located]
    unread: dict[str, tuple[CellMapping, BaseException]]


@dataclasses.dataclass(frozen=True)
class Changed:
    """A service after a change; ``placement_error`` when Placement could not be told (kept in the DB)."""

    service: Located
    providers: int = 0
    placement_changed: bool = False
    placement_error: Exception | None = None


def locate(api_engine: Engine, cells: CellDatabases, timeout: float, *,
           cell_names: set[str] | None = None, top_level: bool = True) -> Found:
    """Every service of the API database and of each cell (those of ``cell_names`` only,
    when given), the cells read at once, each bounded by ``timeout``."""
    mappings = {m.uuid: m for m in cells.reload()
                if cell_names is None or m.name in cell_names}
    answers = gather({uuid: (lambda u=uuid: services.list_all(cells.engine(u)))
                      for uuid in mappings}, timeout)
    found = ([Located(None, api_engine, row) for row in services.list_all(api_engine)]
             if top_level else [])
    unread = {}
    for uuid, mapping in sorted(mappings.items(), key=lambda kv: kv[1].name):
        answer = answers[uuid]
        if isinstance(answer, (sa.exc.SQLAlchemyError, CellTimeout)):
            unread[uuid] = (mapping, answer)
        elif isinstance(answer, BaseException):
            raise answer
        else:
            engine = cells.engine(uuid)
            found.extend(Located(mapping, engine, row) for row in answer)
    return Found(found, unread)


def _bump(api_engine: Engine) -> None:
    # Every scheduler re-reads its hosts at its next request.
    change_stamps.bump_now(api_engine)


def _reread(one: Located, row: dict | None) -> Located:
    return Located(one.cell, one.engine, row if row is not None else one.row)


def set_disabled(api_engine: Engine, one: Located, *, disabled: bool,
                 reason: str | None = None, placement=None) -> Changed:
    """Disable (with ``reason``) or enable ``one``; a compute service's providers follow in Placement."""
    row = services.set_disabled(one.engine, one.row['host'], one.row['binary'],
                                disabled=disabled, reason=reason)
    _bump(api_engine)
    changed = _reread(one, row)
    if one.row['binary'] != COMPUTE_BINARY or one.cell is None or placement is None:
        return Changed(changed)
    nodes = [n.uuid for n in compute_nodes.list_with_service(one.engine)
             if n.host == one.row['host']]
    try:
        moved = _set_trait(placement, nodes, disabled)
    except (PlacementUnreachable, PlacementClientError) as exc:
        return Changed(changed, providers=len(nodes), placement_error=exc)
    return Changed(changed, providers=len(nodes), placement_changed=moved)


def _set_trait(placement, nodes: list[str], disabled: bool) -> bool:
    moved = False
    for uuid in nodes:
        # At the generation read with them: a write in between is a conflict, read again.
        present, generation = placement.get_traits_and_generation(uuid)
        wanted = (present | {COMPUTE_STATUS_DISABLED} if disabled
                  else present - {COMPUTE_STATUS_DISABLED})
        if wanted != present:
            placement.set_traits(uuid, wanted, generation=generation)
            moved = True
    return moved


def set_forced_down(api_engine: Engine, one: Located, *, forced_down: bool) -> Changed:
    """Force ``one`` down (it is down whatever its heartbeats say) or lift that."""
    row = services.set_forced_down(one.engine, one.row['host'], one.row['binary'],
                                   forced_down=forced_down)
    _bump(api_engine)
    return Changed(_reread(one, row))


def delete(api_engine: Engine, one: Located, *, placement=None) -> None:
    """Delete the service's row; a compute service also takes its nodes, their providers, its
    host mapping and its aggregate memberships along. ``ServiceInUse`` (nothing deleted) while
    the host has instances; a provider Placement will not delete is logged and left, as in
    Nova. A running agent registers its host again at its next report, as in Nova."""
    row = one.row
    if row['binary'] == COMPUTE_BINARY and one.cell is not None:
        host = row['host']
        with one.engine.connect() as conn:
            hosting = instances.placed(conn, [host])
        if hosting:
            raise ServiceInUse('Unable to delete compute service that is hosting instances. '
                               'Migrate or delete the instances first.')
        nodes = [n.uuid for n in compute_nodes.list_with_service(one.engine) if n.host == host]
        for uuid in nodes if placement is not None else ():
            try:
                placement.delete_provider(uuid)
            except (PlacementClientError, PlacementUnreachable) as exc:
                # As Nova: the service goes all the same; the provider is the audit's.
                LOG.error('Failed to delete the resource provider of compute node %s: %s',
                          uuid, exc)
        compute_nodes.delete_hosts(one.engine, [host])
        for membership in aggregates.memberships(api_engine):
            if membership.host == host:
                aggregates.remove_host(api_engine, membership.aggregate_uuid, host)
        with api_engine.begin() as conn:
            host_mappings.unmap(conn, host)
        _bump(api_engine)
    services.delete_row(one.engine, row['id'])
