"""The super conductor's RPC endpoint: ``schedule_and_build_instances`` (boot flow steps 2 and 4).

Its client is ``conductor/super/rpcapi.py``.

For one boot request it asks the scheduler for a claimed host plus
``[conductor] max_attempts - 1`` alternates per instance, then creates the
instances in their chosen cells' databases (``conductor/super/cell_writes.py``,
one transaction per cell), points their instance mappings at those cells and
deletes their build requests (one transaction), and casts each instance's
``build_and_run_instance`` with its whole host list to its chosen host over
its cell's message bus. It reaches into a cell for nothing else but moves (``conductor/super/moves.py``:
a move's destination from the scheduler, handed to the cell's conductor;
confirm and revert).

A scheduler that does not answer in time (it died, or restarted) is asked
again with backoff for ``[conductor] scheduler_retry_timeout`` seconds; the
claims its lost answer may have made are removed before each new attempt
(claims are keyed by instance, so the new answer claims afresh). Only then
does the request fail, saying the scheduler did not answer and for how long.

A super conductor leases the build requests of a boot before it asks the
scheduler (``cellplane/objects/build_request_leases.py``) and places only
what it still holds. Its boot message was acknowledged on receipt, so if it
dies mid-boot the message is gone; what it left is resumed by
``conductor/super/resume.py`` through ``build_held``, under this process's
lease: the outage is a delay.

When the request cannot be placed (NoValidHost, or any answer the scheduler
gives instead of hosts) every instance of the request stays a build request,
marked failed with the reason, which ``cellplane server list/show`` shows.
An instance whose placement fails half-way (its cell's database cannot be
written, its build request was deleted meanwhile) has its Placement claim
removed: every claim the scheduler made for it is either built on or undone.

A cell whose database cannot be reached (restarting, refusing connections,
a connection dropped) is written again with backoff for ``[conductor]
cell_write_retry_timeout`` seconds: a restart within that fails nothing.
If it stays away, the claims are removed and the scheduler is asked again
for those instances without the hosts of the cells that stayed away (their
host mappings, in the API database): top level to top level, no cell is
asked anything. Each round leaves out at least one more cell, so it ends;
an instance no other cell takes fails naming the database and why. A
request with a server group is not moved (its members' places were taken
in the cell the scheduler chose): it fails naming the database.

A build request the user deletes while it is held stays, hidden, until the
holder (or, if the holder died, whoever resumes its work) has undone its
claim and cell row; then it is removed.
"""
from __future__ import annotations

import dataclasses
import datetime
import logging
import time
import uuid as uuid_lib
from typing import Callable, Mapping, Protocol, Sequence

import sqlalchemy as sa
import tenacity
from sqlalchemy.engine import Engine

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.cells.databases import CellDatabases, UnknownCell
from cellplane.db import away
from cellplane.objects import (
    build_request_leases,
    build_requests,
    host_mappings,
    instance_mappings,
    instances,
    migrations,
)
from cellplane.objects.cell_mappings import CellMapping
from cellplane.reservations import Reservation, ReservationStack
from compute_agent.rpcapi import ComputeAPI
from conductor import metrics
from conductor.super import cell_writes, group_places, rpcapi
from conductor.super.moves import MoveRefused, SuperMoves
from placement.client.pending_unclaims import PendingUnclaims

# isort: split
import oslo_messaging as messaging

from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from scheduler.errors import ConsumerAlreadyAllocated, NoValidHost, SchedulerError
from scheduler.rpcapi import SchedulerAPI

LOG = logging.getLogger(__name__)

# What the scheduler answers when a database it reads stayed away (SQLAlchemy's names).
_DATABASE_AWAY_ERRORS = ('OperationalError', 'InterfaceError', 'DisconnectionError')

# A cell mapping -> the compute API client on that cell's bus.
ComputeAPIForCell = Callable[[CellMapping], ComputeAPI]


class _SchedulerSilent(Exception):
    """select_destinations got no answer in any attempt for the whole retry bound."""

    def __init__(self, seconds: float, attempts: int) -> None:
        super().__init__(f'no answer in {seconds:.0f} s, {attempts} attempt(s)')
        self.seconds = seconds
        self.attempts = attempts


@dataclasses.dataclass(frozen=True)
class _Written:
    """An instance written into its cell, waiting for its mapping to point there.

    ``held``: what this request holds for it, the scheduler's claim and then
    the cell row, given back last first if it is not placed.
    """

    instance: Instance
    host_list: Sequence[Selection]
    cell: CellMapping
    engine: Engine
    held: ReservationStack


class Unclaimer(Protocol):
    """What the super conductor needs of Placement: removing a consumer's claim."""

    def unclaim(self, consumer_uuid: str) -> bool: ...


class SchedulerClaim(Reservation):
    """The Placement claim the scheduler made for an instance, held by the request until built."""

    def __init__(self, placement: Unclaimer, instance_uuid: str) -> None:
        self._placement = placement
        self.consumer = instance_uuid

    def _release(self) -> None:
        self._placement.unclaim(self.consumer)

    def __str__(self) -> str:
        return (f'the Placement claim of {self.consumer} (remove it with DELETE '
                f'/allocations/{self.consumer})')


class SuperConductorManager:
    target = messaging.Target(namespace=rpcapi.NAMESPACE, version=rpcapi.API_VERSION)

    def __init__(self, *, api_engine: Engine, cells: CellDatabases,
                 scheduler: SchedulerAPI, compute_api_for: ComputeAPIForCell,
                 placement: Unclaimer, max_attempts: int,
                 scheduler_retry_timeout: float = 180.0,
                 cell_write_retry_timeout: float = 10.0,
                 database_retry_timeout: float = 0.0,
                 host: str = 'super-conductor',
                 sleep: Callable[[float], None] = time.sleep,
                 moves: SuperMoves | None = None) -> None:
        self.moves = moves
        self._api_engine = api_engine
        self._cells = cells
        self._scheduler = scheduler
        self._compute_api_for = compute_api_for
        self._placement = placement
        # The claims of instances that will not be built (failed, deleted)
        # that Placement could not remove: removed later (``pending.retry``).
        self.pending = PendingUnclaims(placement)
        self._num_alternates = max_attempts - 1
        self._scheduler_retry_timeout = scheduler_retry_timeout
        self._cell_write_retry_timeout = cell_write_retry_timeout
        self._database_retry_timeout = database_retry_timeout
        self._sleep = sleep
        # This process's leases: a restarted super conductor on the same host
        # has a new token, and takes over what the old one held.
        self.lease = build_requests.Lease(host=host, token=uuid_lib.uuid4().hex)

    def schedule_and_build_instances(self, ctxt, request_spec: RequestSpec,
                                     instance_uuids: list[str]) -> None:
        if not isinstance(request_spec, RequestSpec) or not isinstance(instance_uuids, list):
            LOG.error('Rejected schedule_and_build_instances: expected a RequestSpec '
                      'and a list of instance UUIDs, got %s and %s',
                      type(request_spec).__name__, type(instance_uuids).__name__)
            return
        started = datetime.datetime.now(datetime.timezone.utc)
        # Taken again while the API database is away (PostgreSQL restarting):
        # the same lease, so a lease taken by an attempt whose answer was lost
        # is read back, not refused.
        requests = away.retry_while_away(
            lambda: build_request_leases.lease_and_read(self._api_engine, instance_uuids,
                                                        self.lease),
            timeout=self._database_retry_timeout, sleep=self._sleep)
        # Not leased: deleted by the user, or resumed by a super conductor
        # while this message waited. Nothing to place.
        uuids = list(requests)
        metrics.INSTANCES_TAKEN.labels('boot').inc(len(uuids))
        if not uuids:
            LOG.info('No build request left to schedule for %s (deleted, or already '
                     'being placed after a resumption)', ', '.join(instance_uuids))
            return
        self.build_held(ctxt, request_spec, requests, started)

    def build_held(self, ctxt, request_spec: RequestSpec,
                   requests: dict[str, build_requests.BuildRequest],
                   started: datetime.datetime) -> None:
        """Schedule and build the requests this process holds (a boot, or a resumed one).

        Every way through places, fails or gives up each request; one still
        held after an error is given back, to be resumed.
        """
        uuids = list(requests)
        try:
            self._schedule_and_build(ctxt, request_spec,
                                     {uuid: requests[uuid].instance for uuid in uuids},
                                     started)
        except Exception:
            self.release(uuids)
            raise

    def release(self, uuids: list[str]) -> None:
        """Give back this process's leases on ``uuids`` (a later resumption finds them)."""
        try:
            away.retry_while_away(
                lambda: build_request_leases.release(self._api_engine, uuids, self.lease),
                timeout=self._database_retry_timeout, sleep=self._sleep)
        except sa.exc.SQLAlchemyError as exc:
            LOG.warning('Could not release the leases of %s (%s); they are resumed '
                        'when this super conductor is restarted or taken for dead',
                        ', '.join(uuids), str(exc).splitlines()[0])

    def _schedule_and_build(self, ctxt, request_spec: RequestSpec,
                            asked: dict[str, Instance], started: datetime.datetime,
                            cells_away: Mapping[str, str] | None = None) -> None:
        """Ask the scheduler for ``asked``, then place them (``cells_away``: cell -> why, left out)."""
        uuids = list(asked)
        # Why this is asked again, in front of any failure (empty the first time).
        before = ''
        spec = request_spec
        if cells_away:
            before = '; '.join(f'could not create the instance in cell {self._cell_name(c)}: '
                               f'{why}' for c, why in cells_away.items()) + \
                '; asked the scheduler for another cell: '
            try:
                spec = self._without_cells(request_spec, uuids, cells_away)
            except sa.exc.SQLAlchemyError as exc:
                self._fail(uuids, f'{before}could not read the hosts of those cells: '
                                  f'{away.first_line(exc)}', why='cell_write')
                return
        try:
            host_lists = self._select_destinations(ctxt, spec, uuids)
        except NoValidHost as exc:
            # Each member's fault names that member (and the one that found no host).
            self._fail(uuids, f'{before}NoValidHost: {exc}', why='no_valid_host', each={
                uuid: f'{before}NoValidHost: {exc.for_member(uuid, position, len(uuids))}'
                for position, uuid in enumerate(uuids, 1)})
            return
        except SchedulerError as exc:
            self._fail(uuids, f'{before}{type(exc).__name__}: {exc}', why='scheduler_refused')
            return
        except messaging.RemoteError as exc:
            # The scheduler removes a failed run's claims itself (all or nothing).
            what = (f'could not read its database: {exc.value.strip().splitlines()[0]}'
                    if exc.exc_type in _DATABASE_AWAY_ERRORS
                    else f'failed: {exc.exc_type}: {exc.value}')
            self._fail(uuids, f'{before}the scheduler {what}', why='scheduler_error')
            return
        except _SchedulerSilent as exc:
            # The scheduler may have claimed before its answer was lost.
            self._fail(uuids, f'{before}the scheduler did not answer in {exc.seconds:.0f} s '
                              f'({exc.attempts} attempt(s); is a cellplane-scheduler '
                              f'running on the top-level bus?)', unclaim=True,
                       why='scheduler_silent')
            return
        except messaging.MessagingException:
            # The bus failed us (broker away): the request is resumed later.
            raise
        except Exception as exc:  # noqa: BLE001 - any other answer fails the request
            # oslo.messaging rebuilds a builtin exception the scheduler raised
            # (ValueError, KeyError...) as itself, not as RemoteError. Raised
            # on, it would leave the request to be resumed, and fail again,
            # every resume interval: the same answer each time, the server in
            # BUILD meanwhile. The scheduler removes a failed run's claims.
            self._fail(uuids, f'{before}the scheduler failed: {type(exc).__name__}: {exc}',
                       why='scheduler_error')
            return
        self._place_and_build(ctxt, request_spec, [
            (asked[uuid], host_list)
            for uuid, host_list in zip(uuids, host_lists, strict=True)], started,
            dict(cells_away or {}))

    def _without_cells(self, spec: RequestSpec, uuids: list[str],
                       cells_away: Mapping[str, str]) -> RequestSpec:
        """``spec`` for ``uuids`` alone, with every host of ``cells_away`` ignored."""
        ignored = set(spec.ignore_hosts)
        for cell_uuid in cells_away:
            ignored.update(host_mappings.hosts_in_cell(self._api_engine, cell_uuid))
        return dataclasses.replace(spec, num_instances=len(uuids),
                                   ignore_hosts=sorted(ignored))

    def _cell_name(self, cell_uuid: str) -> str:
        try:
            return self._cells.mapping(cell_uuid).name
        except (UnknownCell, sa.exc.SQLAlchemyError):
            return cell_uuid

    def _select_destinations(self, ctxt, spec: RequestSpec,
                             uuids: list[str]) -> list[list[Selection]]:
        """The scheduler's answer, asking again while it does not answer (bounded)."""
        began = time.monotonic()
        unanswered = []

        def asked_again(exc: BaseException) -> bool:
            if isinstance(exc, messaging.MessagingTimeout):
                unanswered.append(exc)
                return True
            # An unanswered request is still served when its scheduler gets to
            # it (Placement away, a long queue): its claim can land after the
            # undo below and before the next request claims. That claim is
            # ours; remove it and ask again, within the same bound.
            return bool(unanswered) and isinstance(exc, ConsumerAlreadyAllocated)

        def before_next(state: tenacity.RetryCallState) -> None:
            # The lost answer may have claimed: the next one claims afresh.
            if isinstance(state.outcome.exception(), ConsumerAlreadyAllocated):
                LOG.warning('An unanswered select_destinations for %s claimed after '
                            'all (attempt %d, %.0f s so far); removing its claims and '
                            'asking again', ', '.join(uuids), state.attempt_number,
                            time.monotonic() - began)
            else:
                LOG.warning('The scheduler did not answer select_destinations for %s '
                            '(attempt %d, %.0f s so far); removing any claims it made '
                            'and asking again', ', '.join(uuids), state.attempt_number,
                            time.monotonic() - began)
            self._claims_of(uuids).unwind()

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(asked_again),
            wait=tenacity.wait_exponential(multiplier=1, max=30),
            stop=tenacity.stop_after_delay(self._scheduler_retry_timeout),
            before_sleep=before_next, sleep=self._sleep, reraise=True)
        try:
            return retrying(self._scheduler.select_destinations, ctxt, spec, uuids,
                            self._num_alternates)
        except messaging.MessagingTimeout:
            raise _SchedulerSilent(time.monotonic() - began,
                                   retrying.statistics.get('attempt_number', 1)) from None

    def _place_and_build(self, ctxt, spec: RequestSpec,
                         chosen_for: Sequence[tuple[Instance, Sequence[Selection]]],
                         started: datetime.datetime,
                         cells_away: dict[str, str] | None = None) -> None:
        """Write the instances into their cells, point their mappings there, cast their builds.

        One transaction per cell for the instances placed in it, one in the
        API database for all the mappings, then one cast per instance: a
        multi-create costs a few round trips, not a few per instance.
        Those whose cell's database stayed away are asked for again without
        that cell (``cells_away``: the cells left out so far, and why).
        """
        cells_away = dict(cells_away or {})
        asked_of = {asked.uuid: asked for asked, _ in chosen_for}
        moved: list[str] = []
        spec = self._with_group_places(spec)
        held = {asked.uuid: self._claims_of([asked.uuid], final=True)
                for asked, _ in chosen_for}
        by_cell: dict[str, list[tuple[Instance, Sequence[Selection]]]] = {}
        for asked, host_list in chosen_for:
            chosen = host_list[0]
            instance = dataclasses.replace(
                asked, host=chosen.service_host, node=chosen.nodename,
                cell_uuid=chosen.cell_uuid,
                availability_zone=asked.availability_zone or chosen.availability_zone)
            by_cell.setdefault(chosen.cell_uuid, []).append((instance, host_list))
        written: list[_Written] = []
        for cell_uuid, share in by_cell.items():
            try:
                cell = self._cells.mapping(cell_uuid)
                engine = self._cells.engine(cell_uuid)
                self._write_into(engine, share, spec, ctxt, started)
            except (UnknownCell, sa.exc.SQLAlchemyError) as exc:
                share_uuids = [instance.uuid for instance, _ in share]
                moving = away.is_away(exc) and spec.instance_group is None
                # A claim of an instance asked for again is removed now or
                # never: kept for later, it would remove the next one.
                self._claims_of(share_uuids, final=not moving).unwind()
                if not away.is_away(exc):
                    self._fail(share_uuids,
                               f'could not create the instance in cell {cell_uuid}: {exc}',
                               why='cell_write')
                    continue
                why = (f'its database did not answer for {self._cell_write_retry_timeout:.0f}'
                       f' s: {away.first_line(exc)}')
                if spec.instance_group is not None:
                    self._fail(share_uuids, f'could not create the instance in cell '
                                            f'{self._cell_name(cell_uuid)}: {why}',
                               why='cell_write')
                    continue
                LOG.warning('Could not create %s in cell %s, %s; asking the scheduler '
                            'again for another cell', ', '.join(share_uuids),
                            self._cell_name(cell_uuid), why)
                cells_away[cell_uuid] = why
                moved.extend(share_uuids)
                continue
            for instance, host_list in share:
                held[instance.uuid].push(cell_writes.CellRow(engine, instance.uuid,
                                                             cell.name))
                written.append(_Written(instance, host_list, cell, engine,
                                        held[instance.uuid]))
        if written:
            self._point_and_cast(ctxt, spec, written)
        if moved:
            self._schedule_and_build(ctxt, spec, {uuid: asked_of[uuid] for uuid in moved},
                                     started, cells_away)

    def _write_into(self, engine: Engine,
                    share: Sequence[tuple[Instance, Sequence[Selection]]],
                    spec: RequestSpec, ctxt, started: datetime.datetime) -> None:
        """``cell_writes.create_many``, written again while the cell's database is away (bounded)."""
        away.retry_while_away(
            lambda: cell_writes.create_many(engine, share, spec, request_id=ctxt.request_id,
                                            scheduling_started=started),
            timeout=self._cell_write_retry_timeout, sleep=self._sleep)

    def _point_and_cast(self, ctxt, spec: RequestSpec, written: list[_Written]) -> None:
        """Point the mappings of the instances written into cells there, and cast their builds."""
        try:
            outcomes = self._place_in_api_database(
                {w.instance.uuid: w.cell.uuid for w in written})
            failure = None
        except (sa.exc.SQLAlchemyError, LookupError) as exc:
            # LookupError: a cell mapping was deleted while we scheduled.
            outcomes, failure = {}, f'{type(exc).__name__}: {str(exc).splitlines()[0]}'
        for placed in written:
            outcome = outcomes.get(placed.instance.uuid)
            if outcome == build_requests.PLACED:
                self._cast_build(ctxt, placed, spec)
            else:
                self._withdraw(placed, outcome, failure)

    def _place_in_api_database(self, cells_by_instance: dict[str, str]) -> dict:
        """``build_requests.place_many``, done again while the API database is away (bounded).

        An attempt whose answer was lost may have committed: an instance it
        placed is then no build request any more but a mapping pointing at a
        cell, which the next attempt would take for deleted. It is placed.
        """
        attempts = []

        def attempt() -> dict:
            attempts.append(1)
            outcomes = build_requests.place_many(self._api_engine, cells_by_instance,
                                                 self.lease)
            gone = [u for u, o in outcomes.items() if o == build_requests.DELETED]
            if len(attempts) > 1 and gone:
                for uuid, cell_id, queued_for_delete in instance_mappings.cells_of(
                        self._api_engine, gone):
                    if cell_id is not None and not queued_for_delete:
                        outcomes[uuid] = build_requests.PLACED
            return outcomes
        return away.retry_while_away(attempt, timeout=self._database_retry_timeout,
                                     sleep=self._sleep)

    def _with_group_places(self, spec: RequestSpec) -> RequestSpec:
        """The spec with its group's members and held places (the cell checks alternates with them)."""
        try:
            return group_places.with_places(self._api_engine, spec)
        except sa.exc.SQLAlchemyError as exc:
            # The build goes on; a reschedule then checks against the members
            # the spec names (none), as for a group without members.
            LOG.warning('Could not read the members of server group %s (%s); the cell '
                        'cannot check alternates against them', spec.instance_group.uuid,
                        str(exc).splitlines()[0])
            return spec

    def _withdraw(self, placed: _Written, outcome, failure: str | None) -> None:
        """Give back what the request holds for an instance not placed: its cell row, its claim.

        A cell row that cannot be removed is left to a resumption (raised).
        """
        uuid, cell, host = placed.instance.uuid, placed.cell, placed.instance.host
        if isinstance(outcome, build_requests.LeaseLost):
            # This process was taken for dead and its request resumed: the
            # claim is the resumer's now.
            LOG.warning('Not building %s: %s; removing it from cell %s', uuid, outcome,
                        cell.name)
            [claim] = [r for r in placed.held if isinstance(r, SchedulerClaim)]
            placed.held.keep(claim)
        elif failure:
            LOG.error('Could not point the mapping of %s at cell %s (%s); removing '
                      'it from the cell and its claim on %s', uuid, cell.name, failure, host)
        else:
            LOG.info('Instance %s was deleted while it was being scheduled; removing '
                     'it from cell %s and its claim on %s', uuid, cell.name, host)
        placed.held.unwind()
        for reservation, exc in placed.held.failed:
            if isinstance(reservation, cell_writes.CellRow):
                raise exc
        if isinstance(outcome, build_requests.LeaseLost):
            return
        if failure:
            self._fail([uuid], f'could not record its placement in cell {cell.name}: '
                               f'{failure}', why='cell_write')
        else:
            self._forget_deleted([uuid])

    def _cast_build(self, ctxt, placed: _Written, spec: RequestSpec) -> None:
        instance, cell = placed.instance, placed.cell
        try:
            self._compute_api_for(cell).build_and_run_instance(
                ctxt, instance.host, instance, spec, placed.host_list)
        except Exception:  # one lost cast must not stop the others
            LOG.exception('Could not cast the build of %s to %s in cell %s; the '
                          'cell conductor moves it to its next alternate once '
                          '[conductor] build_start_timeout has passed',
                          instance.uuid, instance.host, cell.name)
            return
        metrics.INSTANCES_PLACED.inc()
        LOG.info('Instance %s placed in cell %s on %s (%d alternate(s)); build cast',
                 instance.uuid, cell.name, instance.host, len(placed.host_list) - 1)

    def _fail(self, uuids: Sequence[str], reason: str, *, why: str,
              unclaim: bool = False, each: Mapping[str, str] | None = None) -> None:
        """Mark the build requests failed with ``reason`` (``each``: a reason per instance instead)."""
        LOG.info('Build request(s) %s failed: %s', ', '.join(uuids), reason)
        def fail(uuids_: Sequence[str], why_: str) -> int:
            # Marking failed twice is marking failed once: done again while
            # the API database is away.
            return away.retry_while_away(
                lambda: build_requests.fail(self._api_engine, uuids_, why_),
                timeout=self._database_retry_timeout, sleep=self._sleep)

        if each is None:
            failed = fail(uuids, reason)
        else:
            failed = sum(fail([uuid], each[uuid]) for uuid in uuids)
        metrics.INSTANCES_FAILED.labels(why).inc(failed)
        if unclaim:
            self._claims_of(uuids, final=True).unwind()
        # Those the user deleted meanwhile are not failed: they are gone.
        self._forget_deleted(uuids)

    def _forget_deleted(self, uuids: Sequence[str]) -> list[str]:
        """Remove those of ``uuids`` the user deleted while this process held them; which went."""
        try:
            return build_requests.forget_deleted(self._api_engine, uuids, self.lease)
        except sa.exc.SQLAlchemyError as exc:
            LOG.warning('Could not remove the deleted build request(s) among %s (%s); '
                        'they are cleaned when this super conductor is restarted or '
                        'taken for dead', ', '.join(uuids), str(exc).splitlines()[0])
            return []

    # -- moves (API 1.3; conductor/super/moves.py) -------------------------------
    def migrate_server(self, ctxt, cell_uuid: str, migration_uuid: str) -> None:
        self._move('migrate_server', cell_uuid, migration_uuid,
                   lambda: self.moves.migrate(ctxt, cell_uuid, migration_uuid))

    def evacuate_server(self, ctxt, cell_uuid: str, migration_uuid: str) -> None:
        """API 1.4: the evacuation's destination from the scheduler, handed to the cell."""
        self._move('evacuate_server', cell_uuid, migration_uuid,
                   lambda: self.moves.migrate(ctxt, cell_uuid, migration_uuid))

    def confirm_resize(self, ctxt, cell_uuid: str, migration_uuid: str) -> None:
        self._move('confirm_resize', cell_uuid, migration_uuid,
                   lambda: self.moves.confirm(ctxt, cell_uuid, migration_uuid))

    def revert_resize(self, ctxt, cell_uuid: str, migration_uuid: str) -> None:
        self._move('revert_resize', cell_uuid, migration_uuid,
                   lambda: self.moves.revert(ctxt, cell_uuid, migration_uuid))

    @staticmethod
    def _move(method: str, cell_uuid, migration_uuid, work) -> None:
        if not all(isinstance(v, str) and v for v in (cell_uuid, migration_uuid)):
            LOG.error('Rejected %s: cell_uuid and migration_uuid must be non-empty strings, '
                      'got %r and %r', method, cell_uuid, migration_uuid)
            return
        try:
            work()
        except (MoveRefused, migrations.MigrationNotFound, instances.InstanceNotFound,
                UnknownCell) as exc:
            LOG.error('Rejected %s of migration %s: %s', method, migration_uuid, exc)

    def _claims_of(self, uuids: Sequence[str], *, final: bool = False) -> ReservationStack:
        """The claims the scheduler made (or may have made) for ``uuids``, held.

        Unwound, each is removed from Placement. ``final``: the instances
        will not be claimed for again (failed, deleted), so one Placement
        cannot remove now is kept and removed later (``pending``); else it
        is logged with the command that removes it. The others still are.
        """
        held = ReservationStack()
        for uuid in uuids:
            held.push(SchedulerClaim(self.pending if final else self._placement, uuid))
        return held

    def _unclaim(self, uuid: str) -> None:
        """Remove whatever claim ``uuid`` may hold (none is fine); a failure is logged."""
        self._claims_of([uuid]).unwind()
