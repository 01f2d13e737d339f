"""The scheduler's book of server groups: members and their places in the API database, their states in the cells.

The scheduler works out a request's server group itself (ARCHITECTURE.md,
"Server groups"): it reads the members and the places they hold here,
locates them in Placement (``scheduler.instance_locator``), and takes a
place for each instance it claims a host for. ``GroupBook`` is what
``GroupPlaces`` needs of it (the unit tests give a fake one). A member that holds a place but has no
allocation in Placement is asked of its cell: in ERROR, deleted, or gone,
its place is stale and given back; still building (between two hosts of a
reschedule, or not in a cell yet), it keeps it.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Protocol, Sequence

import sqlalchemy as sa

from cellplane.cells.databases import CellDatabases, UnknownCell
from cellplane.objects import (
    build_requests,
    failure_domains,
    instance_mappings,
    instances,
    server_group_places,
)
from cellplane.objects.server_group_places import Member
from rpc_schemas import instance as instance_states


class GroupBook(Protocol):
    def members(self, group_uuid: str) -> Sequence[Member]: ...

    def gone(self, instance_uuids: Sequence[str]) -> set[str]: ...

    def hold(self, instance_uuid: str, domain: str, max_per_domain: int | None) -> bool: ...

    def follow(self, member: Member, domain: str, max_per_domain: int | None) -> bool: ...

    def release(self, instance_uuids: Iterable[str]) -> None: ...

    def release_stale(self, held: Iterable[Member]) -> None: ...

    def domain_names(self, level: str) -> Mapping[str, str]: ...


class ApiGroupBook:
    def __init__(self, cells: CellDatabases) -> None:
        self._cells = cells

    @property
    def _api(self):
        return self._cells.api_engine

    def members(self, group_uuid: str) -> list[Member]:
        return server_group_places.members(self._api, group_uuid)

    def gone(self, instance_uuids: Sequence[str]) -> set[str]:
        """Those of the members that are in ERROR, deleted, or exist no more."""
        uuids = list(instance_uuids)
        if not uuids:
            return set()
        mapped = {uuid: (cell_uuid, queued) for uuid, cell_uuid, queued
                  in instance_mappings.cell_uuids_of(self._api, uuids)}
        gone = {u for u in uuids if u not in mapped or mapped[u][1]}
        unplaced = [u for u in uuids if u in mapped and mapped[u][0] is None]
        pending = build_requests.get_many(self._api, unplaced)
        gone |= {u for u in unplaced if u not in pending or pending[u].failed}
        by_cell: dict[str, list[str]] = {}
        for uuid, (cell_uuid, queued) in mapped.items():
            if cell_uuid is not None and not queued:
                by_cell.setdefault(cell_uuid, []).append(uuid)
        for cell_uuid, share in by_cell.items():
            try:
                with self._cells.engine(cell_uuid).connect() as conn:
                    rows = {r['uuid']: r['vm_state'] for r in instances.get_many(conn, share)}
            except (UnknownCell, sa.exc.SQLAlchemyError):
                continue   # cannot tell: the place is kept
            gone |= {u for u in share if rows.get(u) in (
                None, instance_states.ERROR, instance_states.DELETED)}
        return gone

    def hold(self, instance_uuid: str, domain: str, max_per_domain: int | None) -> bool:
        return server_group_places.hold(self._api, instance_uuid, domain, max_per_domain)

    def follow(self, member: Member, domain: str,
               max_per_domain: int | None) -> bool:
        return server_group_places.follow(self._api, member, domain, max_per_domain)

    def release(self, instance_uuids: Iterable[str]) -> None:
        server_group_places.release(self._api, instance_uuids)

    def release_stale(self, held: Iterable[Member]) -> None:
        server_group_places.release_stale(self._api, held)

    def domain_names(self, level: str) -> dict[str, str]:
        """Domain uuid -> name, for every domain of ``level``."""
        return {d.uuid: d.name for d in failure_domains.list_all(self._api, level=level)}
