"""The scheduler's book of server groups: members and their places in the API database, their states in the cells.

The scheduler works out a request's server group itself (ARCHITECTURE.md,
"Server groups"): it reads the members and the places they hold here,
surveys them in the databases (``survey``), locates in Placement
(``scheduler.instance_locator``) those the survey cannot place, and takes a
place for each instance it claims a host for. ``GroupBook`` is what
``GroupPlaces`` needs of it (the unit tests give a fake one).

The survey reads each member's mapping, then its build request (not in a
cell yet) or its row in its cell, one statement per table and cell:

- *settled*: ACTIVE in its cell with no task under way: it runs on its
  row's host. Every claim that gives an instance another host (a build or
  its reschedule, a move, an evacuation) is made while the instance is
  BUILDING, RESIZED or has a task_state, and the row leaves that state only
  once it runs there. (A live migration's abort clears the task before its
  destination's allocation is given back: the row's host, where it runs,
  is the one counted.);
- *waiting*: not in a cell yet and its build request not failed. The one
  allocation it may have is its own scheduler's claim (``GroupPlaces.read``
  says when its place tells where that is);
- *gone*: in ERROR, deleted, or no more (no mapping, queued for delete, a
  failed build request, no row in its cell). A gone member with no
  allocation in Placement gives its place back;
- anything else (building in a cell, moving, a cell that cannot be read)
  is asked of Placement.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable, Iterable, Mapping, Protocol, Sequence

import sqlalchemy as sa

from cellplane.cells.databases import CellDatabases, UnknownCell
from cellplane.db import reads
from cellplane.objects import (
    build_requests,
    failure_domains,
    instance_mappings,
    instances,
    server_group_places,
)
from cellplane.objects.server_group_places import Member
from rpc_schemas import instance as instance_states


@dataclasses.dataclass(frozen=True)
class Survey:
    """What the databases say of some members (the module's docstring says what each kind means)."""
    settled: Mapping[str, str] = dataclasses.field(default_factory=dict)   # -> its host
    waiting: frozenset[str] = frozenset()
    gone: frozenset[str] = frozenset()


class GroupBook(Protocol):
    def members(self, group_uuid: str) -> Sequence[Member]: ...

    def survey(self, instance_uuids: Sequence[str]) -> Survey: ...

    def hold(self, instance_uuid: str, domain: str, max_per_domain: int | None) -> bool: ...

    def follow(self, member: Member, domain: str, max_per_domain: int | None) -> bool: ...

    def release(self, instance_uuids: Iterable[str]) -> None: ...

    def release_stale(self, held: Iterable[Member]) -> None: ...

    def domain_names(self, level: str) -> Mapping[str, str]: ...


# How long the names of a level's failure domains are kept (``domain_names``).
NAMES_SECONDS = 10.0


class ApiGroupBook:
    def __init__(self, cells: CellDatabases, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._cells = cells
        self._clock = clock
        self._names_lock = threading.Lock()
        self._names: dict[str, tuple[float, dict[str, str]]] = {}

    @property
    def _api(self):
        return self._cells.api_engine

    def members(self, group_uuid: str) -> list[Member]:
        return server_group_places.members(self._api, group_uuid)

    def survey(self, instance_uuids: Sequence[str]) -> Survey:
        """Which of the members are settled (and on which host), waiting, or gone."""
        uuids = list(instance_uuids)
        if not uuids:
            return Survey()
        mapped = {uuid: (cell_uuid, queued) for uuid, cell_uuid, queued
                  in instance_mappings.cell_uuids_of(self._api, uuids)}
        gone = {u for u in uuids if u not in mapped or mapped[u][1]}
        unplaced = [u for u in uuids if u in mapped and mapped[u] == (None, False)]
        waiting = build_requests.waiting_of(self._api, unplaced)
        gone |= {u for u in unplaced if u not in waiting}
        by_cell: dict[str, list[str]] = {}
        for uuid, (cell_uuid, queued) in mapped.items():
            if cell_uuid is not None and not queued:
                by_cell.setdefault(cell_uuid, []).append(uuid)
        settled = {}
        for cell_uuid, share in by_cell.items():
            try:
                with reads.connect(self._cells.engine(cell_uuid)) as conn:
                    rows = {r[0]: r for r in instances.states_of(conn, share)}
            except (UnknownCell, sa.exc.SQLAlchemyError):
                continue   # cannot tell: Placement is asked, and the place is kept
            for uuid in share:
                row = rows.get(uuid)
                if row is None or row[1] in (instance_states.ERROR, instance_states.DELETED):
                    gone.add(uuid)
                elif row[1] == instance_states.ACTIVE and row[2] is None and row[3]:
                    settled[uuid] = row[3]
        return Survey(settled=settled, waiting=frozenset(waiting), gone=frozenset(gone))

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
        """Domain uuid -> name, for every domain of ``level``, read at most every ``NAMES_SECONDS``.

        Only a NoValidHost message shows them, and a run that failed in its
        first window of candidates is tried again at once (``destinations``):
        a group's racing members would otherwise read every name of the level
        at each such try. A renamed domain shows its old name for as long.
        """
        now = self._clock()
        with self._names_lock:
            kept = self._names.get(level)
            if kept is not None and now - kept[0] < NAMES_SECONDS:
                return kept[1]
        names = {d.uuid: d.name for d in failure_domains.list_all(self._api, level=level)}
        with self._names_lock:
            self._names[level] = (now, names)
        return names
