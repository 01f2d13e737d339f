"""Draining a compute host: disable it, then move every instance off it, a few at a time.

    one = compute_services.locate(...)                     # the host's compute service
    drain = HostDrain(api_engine, cells, conductor, ctxt, one, placement=client,
                      mode=LIVE, parallel=4, deadline=600)
    report = drain.run(progress=lambda done, total: ...)
    report.left                                             # what still runs there

The host's service is disabled first (reason ``draining``; its providers
get ``COMPUTE_STATUS_DISABLED`` in Placement, ``compute_services``), so
nothing new lands there while it empties. Each instance is then moved by
the very calls the ``cellplane server live-migrate|migrate`` commands and
the compute API's server actions make (``cellplane_api.moves``), at most
``parallel`` at once: a live migration ends ``done`` or ``failed``; a cold
migration is asked ``confirm_at_finish`` (a drain frees the source: nobody
is asked to confirm), so its cell conductor confirms it as it finishes and
it ends ``confirmed`` (one still ``finished`` after ``CONFIRM_GRACE``, from
a cell conductor that does not confirm, is confirmed by the drain).
An instance that cannot move (refused: not ACTIVE, busy; or its move ended
``failed``/``error``: NoValidHost with the scheduler's reason, every
destination failed) stays where it is, as the move left it: ACTIVE on this
host with its own allocation. Past ``deadline`` seconds no move is
started; those in flight are waited for (each at most ``move_timeout``),
and the instances never tried are reported ``not started``. Instances that
land on the host while it drains (builds that had already chosen it) are
taken in the same run; one still building there is moved once built
(waited for at most ``move_timeout``). The report names every instance: where it went and
how long it took, or why it did not.

The drain runs where it is asked (the ``cellplane-manage`` process): it
asks for moves and polls their migrations in the instance's cell; no
service keeps a drain's state, and one interrupted is run again (the
moves it started go on by themselves).
"""
from __future__ import annotations

import dataclasses
import time
from typing import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.context import RequestContext
from cellplane.db import reads
from cellplane.objects import instances, migrations
from cellplane_api import compute_services, moves, servers
from conductor.super.rpcapi import SuperConductorAPI
from placement.client import PlacementClientError, PlacementUnreachable
from rpc_schemas.instance import BUILDING

LIVE = 'live'
COLD = 'cold'
MODES = (LIVE, COLD)
DRAINING = 'draining'

# Outcome.result
MOVED = 'moved'
NOT_MOVED = 'not moved'
NOT_STARTED = 'not started'
GONE = 'gone'

POLL_SECONDS = 0.2
# A cold move asked confirm_at_finish and seen finished this long is
# confirmed by the drain (its cell conductor does not do it).
CONFIRM_GRACE = 5.0
DEFAULT_MOVE_TIMEOUT = 600.0


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What became of one instance of the drained host.

    ``result``: ``moved`` (to ``dest_host``, in ``seconds``), ``not moved``
    (``reason``: the refusal, or the migration's error; it stays on the
    host), ``not started`` (the deadline passed first), ``gone`` (deleted
    while the host drained).
    """

    instance_uuid: str
    name: str | None
    result: str
    dest_host: str | None = None
    seconds: float | None = None
    migration_uuid: str | None = None
    reason: str | None = None


@dataclasses.dataclass(frozen=True)
class DrainReport:
    """The drain's end: every instance's outcome, in the order they were taken, and what is left."""

    host: str
    cell: str
    mode: str
    outcomes: list[Outcome]
    # The instances still on the host when the drain ended: {"uuid", "display_name"}.
    left: list[dict]
    deadline_passed: bool
    seconds: float

    @property
    def empty(self) -> bool:
        return not self.left


@dataclasses.dataclass
class _InFlight:
    row: dict
    migration: migrations.Migration
    started: float
    confirm_asked: bool = False
    # When a move confirmed at its finish was first seen still finished.
    finished_seen: float | None = None


def disable(api_engine: Engine, one: compute_services.Located,
            placement) -> compute_services.Changed:
    """Take the host out of scheduling (reason ``draining``), as ``service disable`` does."""
    return compute_services.set_disabled(api_engine, one, disabled=True, reason=DRAINING,
                                         placement=placement)


def undrain(api_engine: Engine, one: compute_services.Located,
            placement) -> compute_services.Changed:
    """Put the host back into scheduling: the same as ``service enable``."""
    return compute_services.set_disabled(api_engine, one, disabled=False,
                                         placement=placement)


class HostDrain:
    """One drain of one host: ``run`` disables it and moves its instances off."""

    def __init__(self, api_engine: Engine, cells: CellDatabases,
                 conductor: SuperConductorAPI, ctxt: RequestContext,
                 one: compute_services.Located, *, placement, mode: str = LIVE,
                 parallel: int = 1, deadline: float | None = None,
                 move_timeout: float = DEFAULT_MOVE_TIMEOUT,
                 poll_seconds: float = POLL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if mode not in MODES:
            raise ValueError(f'drain mode must be one of {", ".join(MODES)}, not {mode!r}')
        if parallel < 1:
            raise ValueError(f'a drain moves at least 1 instance at a time, not {parallel}')
        if one.cell is None or one.row['binary'] != compute_services.COMPUTE_BINARY:
            raise ValueError(f'{one.row["binary"]} on {one.row["host"]} is not a compute '
                             f'service of a cell: only a compute host is drained')
        self._api_engine = api_engine
        self._cells = cells
        self._conductor = conductor
        self._ctxt = ctxt
        self._one = one
        self._placement = placement
        self.mode = mode
        self._parallel = parallel
        self._deadline = deadline
        self._move_timeout = move_timeout
        self._poll = poll_seconds
        self._clock = clock
        self.host = one.row['host']
        self.disabled: compute_services.Changed | None = None

    # -- the host's instances -----------------------------------------------------
    def _on_host(self) -> list[dict]:
        with self._one.engine.connect() as conn:
            return instances.placed(conn, [self.host])

    def _building(self, uuid: str) -> bool:
        with self._one.engine.connect() as conn:
            row = instances.get_instance(conn, uuid)
        return row is not None and row['vm_state'] == BUILDING

    # -- one move -------------------------------------------------------------------
    def _ask(self, row: dict) -> migrations.Migration:
        # The host's instances were read from its cell: no mapping read per move.
        cell_uuid = self._one.cell.uuid
        if self.mode == LIVE:
            return moves.live_migrate(self._api_engine, self._cells, self._conductor,
                                      self._ctxt, row['uuid'], cell_uuid=cell_uuid)
        # Confirmed by the cell conductor as it finishes: nobody is asked to.
        return moves.migrate(self._api_engine, self._cells, self._conductor, self._ctxt,
                             row['uuid'], confirm_at_finish=True, cell_uuid=cell_uuid)

    def _read(self, flying: list[_InFlight]) -> dict[str, migrations.Progress]:
        """How far the moves in flight are, by migration uuid: one read of the cell per poll."""
        with reads.connect(self._one.engine) as conn:
            return migrations.progress_of(conn, [moving.migration.uuid for moving in flying])

    def _source_held(self, migration: migrations.Progress) -> bool:
        """Whether the migration's consumer still holds the source's allocation (unknown: no)."""
        try:
            return bool(self._placement.get_allocations(migration.uuid).allocations)
        except (PlacementClientError, PlacementUnreachable):
            return False

    def _settle(self, moving: _InFlight, now: float,
                read: dict[str, migrations.Progress] | sa.exc.SQLAlchemyError
                ) -> Outcome | None:
        """The move's outcome once it is over; None while it goes on (a finished cold one is confirmed).

        ``read``: this poll's ``_read`` of the moves in flight, or the error it raised.
        """
        if isinstance(read, sa.exc.SQLAlchemyError):
            # The cell database away for a moment: read again at the next poll,
            # within the move's timeout.
            if now - moving.started <= self._move_timeout:
                return None
            return Outcome(moving.row['uuid'], moving.row['display_name'], NOT_MOVED,
                           migration_uuid=moving.migration.uuid,
                           seconds=round(now - moving.started, 1),
                           reason=f'its migration could not be read from cell '
                                  f'{self._one.cell.name} for {self._move_timeout:g} s '
                                  f'({type(read).__name__}); see `cellplane server '
                                  f'migration show {moving.migration.uuid}`')
        migration = read.get(moving.migration.uuid)
        if migration is None:
            raise migrations.MigrationNotFound(f'no migration {moving.migration.uuid} in '
                                               f'cell {self._one.cell.name}')
        row, took = moving.row, round(now - moving.started, 1)
        done = dict(instance_uuid=row['uuid'], name=row['display_name'],
                    migration_uuid=migration.uuid, seconds=took)
        if migration.status in (migrations.DONE, migrations.CONFIRMED):
            # A live migration is marked done before the cell conductor frees
            # its source allocation: moved, once the source holds nothing. A
            # confirm removes it before it writes confirmed (conductor/super/moves.py).
            if (migration.status == migrations.DONE and self._source_held(migration)
                    and now - moving.started <= self._move_timeout):
                return None
            return Outcome(result=MOVED, dest_host=migration.dest_host, **done)
        if migration.status in (migrations.FAILED, migrations.ERROR):
            return Outcome(result=NOT_MOVED, reason=migration.error, **done)
        if migration.status == migrations.REVERTED:
            return Outcome(result=NOT_MOVED, reason='the move was reverted (not by the '
                                                    'drain): it runs on this host again',
                           **done)
        if migration.status == migrations.FINISHED and not moving.confirm_asked:
            # A move asked confirm_at_finish is confirmed by its cell conductor
            # as it finishes: asked here only if it stays finished (a cell
            # conductor older than the column); refused then because a
            # confirm is under way (resize_confirming), that one is waited for.
            by_cell = migration.confirm_at_finish
            if by_cell and moving.finished_seen is None:
                moving.finished_seen = now
            if not by_cell or now - moving.finished_seen > CONFIRM_GRACE:
                moving.confirm_asked = True
                try:
                    moves.confirm(self._api_engine, self._cells, self._conductor,
                                  self._ctxt, row['uuid'])
                except servers.ServerError as exc:
                    if not (by_cell and isinstance(exc, moves.MoveConflict)):
                        return Outcome(result=NOT_MOVED, dest_host=migration.dest_host,
                                       reason=f'moved to {migration.dest_host} but not '
                                              f'confirmed ({exc}): the source keeps its '
                                              f'allocation until `cellplane server resize '
                                              f'confirm`', **done)
        if now - moving.started > self._move_timeout:
            return Outcome(result=NOT_MOVED, reason=(
                f'still {migration.status} after {self._move_timeout:g} s; the drain '
                f'stopped waiting (see `cellplane server migration show '
                f'{migration.uuid}`)'), **done)
        return None

    # -- the drain ----------------------------------------------------------------------
    def run(self, progress: Callable[[int, int], None] | None = None) -> DrainReport:
        """Disable the host, move everything off it; the report (the host stays disabled)."""
        started = self._clock()
        deadline_at = None if self._deadline is None else started + self._deadline
        self.disabled = disable(self._api_engine, self._one, self._placement)
        outcomes: dict[str, Outcome] = {}
        flying: dict[str, _InFlight] = {}
        # Instances still being built on the host: (row, since when), asked again once built.
        building: dict[str, tuple[dict, float]] = {}
        pending = self._on_host()
        seen = [row['uuid'] for row in pending]   # in the order taken
        deadline_passed = False

        def report(done_count: int) -> None:
            if progress is not None:
                progress(done_count, len(seen))

        report(0)
        while True:
            now = self._clock()
            deadline_passed = deadline_at is not None and now >= deadline_at
            while pending and len(flying) < self._parallel and not deadline_passed:
                row = pending.pop(0)
                try:
                    migration = self._ask(row)
                except servers.ServerNotFound:
                    outcomes[row['uuid']] = Outcome(row['uuid'], row['display_name'], GONE,
                                                    reason='deleted while the host drained')
                    continue
                except servers.ServerError as exc:   # refused: busy, not ACTIVE, no cell
                    if self._building(row['uuid']):
                        # Its build chose the host before it was disabled: moved once built.
                        building.setdefault(row['uuid'], (row, self._clock()))
                        continue
                    outcomes[row['uuid']] = Outcome(row['uuid'], row['display_name'],
                                                    NOT_MOVED, reason=str(exc))
                    continue
                flying[row['uuid']] = _InFlight(row, migration, self._clock())
            for uuid, (row, since) in list(building.items()):
                if not self._building(uuid):
                    del building[uuid]
                    pending.append(row)
                elif self._clock() - since > self._move_timeout:
                    del building[uuid]
                    outcomes[uuid] = Outcome(uuid, row['display_name'], NOT_MOVED,
                                             reason=f'still building after '
                                                    f'{self._move_timeout:g} s')
            # The wait between two polls comes before the read, so that a slot
            # a move freed is filled as soon as the read shows it, not a poll later.
            if flying or building:
                time.sleep(self._poll)
            try:
                read = self._read(list(flying.values())) if flying else {}
            except sa.exc.SQLAlchemyError as exc:
                read = exc
            for uuid, moving in list(flying.items()):
                ended = self._settle(moving, self._clock(), read)
                if ended is not None:
                    outcomes[uuid] = ended
                    del flying[uuid]
            if deadline_passed:
                pending += [row for row, _ in building.values()]
                building.clear()
                for row in pending:
                    outcomes[row['uuid']] = Outcome(
                        row['uuid'], row['display_name'], NOT_STARTED,
                        reason=f'the deadline ({self._deadline:g} s) passed before its move '
                               f'was started')
                pending = []
            if not pending and not flying and not building and not deadline_passed:
                # What landed meanwhile (a build that had chosen the host already).
                pending = [row for row in self._on_host() if row['uuid'] not in seen]
                seen += [row['uuid'] for row in pending]
            report(len(outcomes))
            if not pending and not flying and not building:
                break
        left = [{'uuid': r['uuid'], 'display_name': r['display_name']}
                for r in self._on_host()]
        return DrainReport(host=self.host, cell=self._one.cell.name, mode=self.mode,
                           outcomes=[outcomes[uuid] for uuid in seen],
                           left=left, deadline_passed=deadline_passed,
                           seconds=round(self._clock() - started, 1))
