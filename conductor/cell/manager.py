"""The cell conductor's RPC endpoint (``conductor/cell/rpcapi.py``): heartbeats, agents' reports, reschedules.

Served on topic ``conductor`` of the cell's bus, namespace
``cell_conductor``. It holds the cell DB, the cell bus and a Placement
client, nothing of the top level: a reschedule walks the alternates it was
given (``conductor/cell/reschedule.py``) and never calls the scheduler.

Every handler checks its payloads and logs, never raises, on a bad message
or a failure: the sender cast and is not listening, and a handler that
raised would leave only a traceback. An instance whose reschedule failed
unexpectedly is set to ERROR with the reason rather than left building.

Moves (API 1.6: ``move_instance``, ``reschedule_move``, ``move_started``,
``move_finished``; API 1.8: ``move_aborted``) are ``conductor/cell/moves.py``'s; a move whose
handling failed unexpectedly ends in error with the instance on its source.
Evacuations (API 1.7: ``evacuate_instance``, and a returning host's
``evacuated_guests`` call and ``evacuations_cleaned``) are there too. From
API 1.9 ``move_instance`` and ``evacuate_instance`` carry ``taken_at``, the
stamp of the super conductor's take (``CellMoves.start``).

A compute host's heartbeat lists the builds it holds: they are marked
started in their build plans, so that the stalled-build check tells a cast
lost on its way from a build that is only slow. From API 1.10 an agent's
hosts heartbeat in one ``host_heartbeats``: one status for them all, their
names and the builds each holds (one payload checked, one UPDATE).

A report that changes an instance (a build result, a build start, a
reschedule) is written again with backoff while the cell database is away,
for ``[conductor] database_retry_timeout`` seconds: a database restart or a
short cut loses no build result. Heartbeats and node records are not: the
next ones replace them.

Fencing: a build result (ACTIVE or ERROR) from a host that does not own the
instance (its build plan names another host, or none) comes from a build
moved away while that host was down
(``stalled_builds.py``); it is refused, and an instance that host built is
destroyed there without touching Placement (``discard_instance``).
"""
from __future__ import annotations

import datetime
import logging

from sqlalchemy.engine import Engine

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.db import away
from cellplane.objects import (
    build_plans,
    compute_nodes,
    instance_actions,
    instances,
    migrations,
    services,
)
from compute_agent.rpcapi import ComputeAPI
from conductor import metrics
from conductor.cell import rpcapi
from conductor.cell.moves import CellMoves
from conductor.cell.reschedule import Rescheduler

# isort: split
import oslo_messaging as messaging

from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.compute_node import ComputeNodeRecord
from rpc_schemas.instance import ACTIVE, DELETED, ERROR, Instance
from rpc_schemas.instance_update import InstanceUpdate
from rpc_schemas.migration import Migration
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from rpc_schemas.service_status import ServiceStatus

LOG = logging.getLogger(__name__)


def _wrong_type(method: str, name: str, value, expected: str) -> str:
    return (f'Rejected {method}: {name} must be {expected}, got '
            f'{type(value).__name__}')


def _check_reschedule(instance, request_spec, host_list, attempt) -> str | None:
    """What is wrong with a reschedule's arguments, or None."""
    for name, value, cls in (('instance', instance, Instance),
                             ('request_spec', request_spec, RequestSpec),
                             ('attempt', attempt, BuildAttempt)):
        if not isinstance(value, cls):
            return f'{name} must be a {cls.NAME} payload, got {type(value).__name__}'
    if not isinstance(host_list, list) or not all(isinstance(s, Selection)
                                                  for s in host_list):
        return 'host_list must be a list of Selection payloads'
    return None


def _check_move(instance, request_spec, migration, host_list, *,
                empty: bool = False) -> str | None:
    """What is wrong with a move's arguments, or None (``empty``: host_list may be empty)."""
    for name, value, cls in (('instance', instance, Instance),
                             ('request_spec', request_spec, RequestSpec),
                             ('migration', migration, Migration)):
        if not isinstance(value, cls):
            return f'{name} must be a {cls.NAME} payload, got {type(value).__name__}'
    if (not isinstance(host_list, list) or (not host_list and not empty)
            or not all(isinstance(s, Selection) for s in host_list)):
        return 'host_list must be a list of Selection payloads'
    return None


def _is_host_name(value) -> bool:
    # As ServiceStatus.host: 1 to 255 characters.
    return isinstance(value, str) and 0 < len(value) <= 255


def _check_host_heartbeats(status, hosts, building) -> str | None:
    """What is wrong with a ``host_heartbeats`` (API 1.10), or None."""
    if not isinstance(status, ServiceStatus):
        return f'status must be a ServiceStatus payload, got {type(status).__name__}'
    if not isinstance(hosts, list) or not all(_is_host_name(h) for h in hosts):
        return 'hosts must be a list of host names (1 to 255 characters)'
    if building is not None and not (
            isinstance(building, dict)
            and all(_is_host_name(h) and isinstance(u, list)
                    and all(isinstance(x, str) and x for x in u)
                    for h, u in building.items())):
        return 'building must map host names to lists of instance uuids'
    return None


def _taken_at(value) -> datetime.datetime | str | None:
    """A hand-over's ``taken_at`` (API 1.9) as a datetime; None if not sent; a str: what is wrong."""
    if value is None:
        return None
    try:
        stamp = datetime.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return f'taken_at must be an ISO 8601 time, got {value!r}'
    if stamp.tzinfo is not None:
        return f'taken_at must be naive UTC, got {value!r}'
    return stamp


class _NotItsBuild(Exception):
    """A build_started from a host the build is not (or no longer) cast to: undo."""


class CellConductorManager:
    target = messaging.Target(namespace=rpcapi.NAMESPACE, version=rpcapi.API_VERSION)

    def __init__(self, *, engine: Engine, rescheduler: Rescheduler,
                 compute: ComputeAPI, moves: CellMoves | None = None,
                 database_retry_timeout: float = 0.0) -> None:
        self.engine = engine
        self.rescheduler = rescheduler
        self.compute = compute
        self.moves = moves
        self._database_retry_timeout = database_retry_timeout

    def _while_away(self, call):
        """``call()`` (one transaction), written again while the cell database is away (bounded)."""
        return away.retry_while_away(call, timeout=self._database_retry_timeout)

    def service_heartbeat(self, ctxt, status: ServiceStatus) -> None:
        if not isinstance(status, ServiceStatus):
            LOG.error('Rejected service_heartbeat: expected a ServiceStatus payload, '
                      'got %s', type(status).__name__)
            return
        services.record_heartbeat(self.engine, status)
        self._mark_started([status])
        LOG.debug('Heartbeat of %s on %s recorded', status.binary, status.host)

    def service_heartbeats(self, ctxt, statuses: list[ServiceStatus]) -> None:
        if (not isinstance(statuses, list)
                or not all(isinstance(s, ServiceStatus) for s in statuses)):
            LOG.error('Rejected service_heartbeats: expected a list of ServiceStatus '
                      'payloads, got %s', type(statuses).__name__)
            return
        services.record_heartbeats(self.engine, statuses)
        self._mark_started(statuses)
        LOG.debug('Heartbeats of %d service(s) recorded', len(statuses))

    def host_heartbeats(self, ctxt, status: ServiceStatus, hosts: list[str],
                        building: dict | None = None) -> None:
        problem = _check_host_heartbeats(status, hosts, building)
        if problem:
            LOG.error('Rejected host_heartbeats: %s', problem)
            return
        services.record_host_heartbeats(self.engine, status, hosts)
        self._mark_building([(host, uuid) for host, uuids in (building or {}).items()
                             for uuid in uuids])
        LOG.debug('Heartbeats of %d %s service(s) of %s recorded', len(hosts),
                  status.binary, status.host)

    def _mark_started(self, statuses: list[ServiceStatus]) -> None:
        """The builds the heartbeating hosts hold have started (a cast that reached them)."""
        self._mark_building([(s.host, uuid) for s in statuses for uuid in s.building or ()])

    def _mark_building(self, building: list[tuple[str, str]]) -> None:
        if building:
            build_plans.mark_started(self.engine, building)

    def remove_compute_hosts(self, ctxt, hosts: list[str]) -> None:
        if (not isinstance(hosts, list) or not hosts
                or not all(isinstance(h, str) and h for h in hosts)):
            LOG.error('Rejected remove_compute_hosts: expected a non-empty list of host '
                      'names, got %r', hosts)
            return
        nodes = compute_nodes.delete_hosts(self.engine, hosts)
        removed = services.delete_hosts(self.engine, hosts, compute_nodes.COMPUTE_BINARY)
        LOG.info('Removed %d compute node(s) and %d compute service(s) of %d host(s) '
                 'no longer run: %s', nodes, removed, len(hosts), ', '.join(sorted(hosts)))

    def reschedule_build(self, ctxt, instance: Instance, request_spec: RequestSpec,
                         host_list: list[Selection], attempt: BuildAttempt) -> None:
        """The build in ``attempt`` failed: move it to the next of ``host_list`` (API 1.5)."""
        self._reschedule('reschedule_build', ctxt, instance, request_spec, host_list, attempt)

    def build_instances(self, ctxt, instance: Instance, request_spec: RequestSpec,
                        host_list: list[Selection], attempt: BuildAttempt) -> None:
        """``reschedule_build`` under its API 1.1-1.4 name.

        Served for one release, for compute agents of the previous release
        (and clients capped below 1.5, and the 1.x conductor API); removed
        in the release after.
        """
        self._reschedule('build_instances', ctxt, instance, request_spec, host_list, attempt)

    def _reschedule(self, method: str, ctxt, instance: Instance, request_spec: RequestSpec,
                    host_list: list[Selection], attempt: BuildAttempt) -> None:
        problem = _check_reschedule(instance, request_spec, host_list, attempt)
        if problem:
            LOG.error('Rejected %s: %s', method, problem)
            return
        try:
            metrics.RESCHEDULES.labels('build_failed').inc()
            self.rescheduler.reschedule(ctxt, instance, request_spec, host_list, attempt)
        except instances.InstanceNotFound as exc:
            LOG.error('Rejected %s: %s', method, exc)
        except Exception as exc:  # the instance must not stay building
            LOG.exception('Reschedule of instance %s failed unexpectedly', instance.uuid)
            message = (f'Reschedule after the failed build on {attempt.host} failed '
                       f'unexpectedly: {type(exc).__name__}: {exc}')
            leftover = self.rescheduler.remove_allocations(instance.uuid)
            if leftover:
                message += f'; {leftover}'
            self._set_error(instance.uuid, attempt.host, message)

    def build_started(self, ctxt, instance_uuid: str, host: str) -> None:
        """The host began the build: task_state spawning, the plan started (if it is that host's)."""
        if not all(isinstance(v, str) and v for v in (instance_uuid, host)):
            LOG.error('Rejected build_started: instance_uuid and host must be non-empty '
                      'strings, got %r and %r', instance_uuid, host)
            return
        def started() -> None:
            with self.engine.begin() as conn:
                # The instance first, then its plan: the order every other
                # writer of both takes, so that none waits on the other.
                if not (instances.set_spawning(conn, instance_uuid)
                        and build_plans.started_on(conn, instance_uuid, host)):
                    raise _NotItsBuild

        try:
            self._while_away(started)
        except _NotItsBuild:
            LOG.info('Ignored the start of the build of instance %s on %s: it is not '
                     'building there (moved, ended or deleted)', instance_uuid, host)
            return
        LOG.debug('Instance %s is spawning on %s', instance_uuid, host)

    def instance_update(self, ctxt, update: InstanceUpdate) -> None:
        if not isinstance(update, InstanceUpdate):
            LOG.error(_wrong_type('instance_update', 'update', update, 'an InstanceUpdate'))
            return
        try:
            outcome = self._while_away(lambda: self._apply(ctxt, update))
        except instances.InstanceNotFound as exc:
            LOG.error('Rejected instance_update (%s): %s', update.vm_state, exc)
            return
        if outcome == 'fenced':
            return
        if outcome == 'late':
            self._terminate_late_arrival(ctxt, update)
            return
        if update.vm_state in (ACTIVE, ERROR):
            metrics.BUILDS_ENDED.labels(update.vm_state.lower()).inc()
        LOG.info('Instance %s is %s%s', update.instance_uuid, update.vm_state,
                 f' on {update.host}' if update.host else '')
        if update.vm_state == DELETED and self.moves is not None:
            try:
                self.moves.deleted(ctxt, update.instance_uuid)
            except Exception:  # the delete is recorded; the audit frees what is left
                LOG.exception('Could not end the move of deleted instance %s',
                              update.instance_uuid)

    def _apply(self, ctxt, update: InstanceUpdate) -> str:
        """Write ``update`` in one transaction: ``applied``, ``fenced`` or ``late`` (deleted meanwhile)."""
        with self.engine.begin() as conn:
            owner = (build_plans.fenced(conn, update.instance_uuid, update.host)
                     if update.host and update.vm_state in (ACTIVE, ERROR) else None)
            if owner is not None:
                self._fence(ctxt, update, owner)
                return 'fenced'
            applied = instances.apply_update(conn, update)
            if update.vm_state == DELETED:
                build_plans.forget(conn, update.instance_uuid)
            elif update.vm_state in (ACTIVE, ERROR):
                build_plans.finish(conn, update.instance_uuid,
                                   update.host if update.vm_state == ACTIVE else None)
            if not applied:
                # Deleted while it was being built: whatever the host
                # made must not keep running (nor be recorded).
                return 'late'
            if update.vm_state == ERROR:
                instances.set_error(
                    conn, update.instance_uuid, host=update.host,
                    message=update.fault_message or 'Instance failed on its host',
                    details=update.fault_message or '')
            if update.attempt is not None:
                action_id = instance_actions.ensure_create_action(
                    conn, update.instance_uuid, request_id=ctxt.request_id,
                    user_id=ctxt.user_id, project_id=ctxt.project_id)
                instance_actions.record_build_attempt(conn, action_id, update.attempt)
                if update.vm_state in (ACTIVE, ERROR):
                    instance_actions.finish_action(conn, action_id, update.fault_message)
        return 'applied'

    def _fence(self, ctxt, update: InstanceUpdate, owner: build_plans.Owner) -> None:
        """A host reported a build that was moved away while it was down: undo it there."""
        LOG.warning('Refused %s of instance %s from %s: its build was moved %s while '
                    '%s was down', update.vm_state, update.instance_uuid, update.host,
                    owner.describe(), update.host)
        if update.vm_state == ACTIVE:
            # Destroyed there without touching Placement: the allocation
            # under this instance's UUID is now the new host's claim.
            self.compute.discard_instance(ctxt, update.host, update.instance_uuid)

    def _terminate_late_arrival(self, ctxt, update: InstanceUpdate) -> None:
        if update.vm_state != ACTIVE or not update.host:
            return
        LOG.warning('Instance %s was deleted while %s built it; it reported ACTIVE '
                    'anyway, so it is terminated there', update.instance_uuid, update.host)
        self.compute.terminate_instance(ctxt, update.host, update.instance_uuid)

    def compute_node_update(self, ctxt, node: ComputeNodeRecord) -> None:
        if not isinstance(node, ComputeNodeRecord):
            LOG.error(_wrong_type('compute_node_update', 'node', node,
                                  'a ComputeNodeRecord'))
            return
        try:
            compute_nodes.upsert(self.engine, node)
        except compute_nodes.ComputeNodeConflict as exc:
            LOG.error('Rejected compute_node_update: %s', exc)
            return
        LOG.debug('Compute node %s/%s (%s) recorded', node.host, node.nodename, node.uuid)

    def compute_node_updates(self, ctxt, nodes: list[ComputeNodeRecord]) -> None:
        if (not isinstance(nodes, list)
                or not all(isinstance(n, ComputeNodeRecord) for n in nodes)):
            LOG.error(_wrong_type('compute_node_updates', 'nodes', nodes,
                                  'a list of ComputeNodeRecord'))
            return
        for conflict in compute_nodes.upsert_many(self.engine, nodes):
            LOG.error('Rejected a node of compute_node_updates: %s', conflict)
        LOG.debug('%d compute node(s) recorded', len(nodes))

    # -- moves (API 1.6) ---------------------------------------------------------
    def move_instance(self, ctxt, instance: Instance, request_spec: RequestSpec,
                      migration: Migration, host_list: list[Selection],
                      taken_at: str | None = None) -> None:
        problem = _check_move(instance, request_spec, migration, host_list)
        stamp = _taken_at(taken_at)
        if problem or isinstance(stamp, str):
            LOG.error('Rejected move_instance: %s', problem or stamp)
            return
        self._guarded('move_instance', ctxt, instance, migration,
                      lambda: self.moves.start(ctxt, instance, request_spec, migration,
                                               host_list, taken_at=stamp))

    def reschedule_move(self, ctxt, instance: Instance, request_spec: RequestSpec,
                        migration: Migration, host_list: list[Selection],
                        attempt: BuildAttempt) -> None:
        problem = (_check_move(instance, request_spec, migration, host_list, empty=True)
                   or (None if isinstance(attempt, BuildAttempt)
                       else 'attempt must be a BuildAttempt payload'))
        if problem:
            LOG.error('Rejected reschedule_move: %s', problem)
            return
        metrics.RESCHEDULES.labels('move_failed').inc()
        self._guarded('reschedule_move', ctxt, instance, migration,
                      lambda: self.moves.reschedule(ctxt, instance, request_spec, migration,
                                                    host_list, attempt))

    # -- evacuations (API 1.7) -------------------------------------------------
    def evacuate_instance(self, ctxt, instance: Instance, request_spec: RequestSpec,
                          migration: Migration, host_list: list[Selection],
                          taken_at: str | None = None) -> None:
        stamp = _taken_at(taken_at)
        problem = _check_move(instance, request_spec, migration, host_list) or (
            None if migration.migration_type == migrations.EVACUATION
            else f'migration {migration.uuid} is a {migration.migration_type}, not an '
                 f'evacuation') or (stamp if isinstance(stamp, str) else None)
        if problem:
            LOG.error('Rejected evacuate_instance: %s', problem)
            return
        self._guarded('evacuate_instance', ctxt, instance, migration,
                      lambda: self.moves.start(ctxt, instance, request_spec, migration,
                                               host_list, taken_at=stamp))

    def evacuated_guests(self, ctxt, guests: dict) -> list[dict]:
        """A call: which of a returning agent's guests were evacuated (see ``CellMoves.evacuated_guests``)."""
        if (not isinstance(guests, dict)
                or not all(isinstance(h, str) and isinstance(u, list)
                           for h, u in guests.items())):
            LOG.error('Rejected evacuated_guests: guests must map host names to lists of '
                      'instance uuids')
            return []
        return self.moves.evacuated_guests(guests)

    def evacuations_cleaned(self, ctxt, host: str, migration_uuids: list[str]) -> None:
        if (not isinstance(host, str) or not host or not isinstance(migration_uuids, list)
                or not all(isinstance(u, str) for u in migration_uuids)):
            LOG.error('Rejected evacuations_cleaned: host must be a name and '
                      'migration_uuids a list of uuids')
            return
        self.moves.cleaned(host, migration_uuids)

    def move_started(self, ctxt, migration_uuid: str, dest_host: str) -> None:
        if not all(isinstance(v, str) and v for v in (migration_uuid, dest_host)):
            LOG.error('Rejected move_started: migration_uuid and dest_host must be '
                      'non-empty strings')
            return
        try:
            self.moves.started(migration_uuid, dest_host)
        except (migrations.MigrationNotFound, migrations.InvalidMigrationTransition) as exc:
            LOG.error('Rejected move_started: %s', exc)

    def move_finished(self, ctxt, migration_uuid: str, instance_uuid: str, host: str,
                      node: str) -> None:
        if not all(isinstance(v, str) and v for v in (migration_uuid, instance_uuid, host,
                                                      node)):
            LOG.error('Rejected move_finished: its arguments must be non-empty strings')
            return
        try:
            self.moves.finished(ctxt, migration_uuid, instance_uuid, host, node)
        except (migrations.MigrationNotFound, migrations.InvalidMigrationTransition) as exc:
            LOG.error('Rejected move_finished: %s', exc)

    def move_aborted(self, ctxt, migration_uuid: str, instance_uuid: str, host: str) -> None:
        if not all(isinstance(v, str) and v for v in (migration_uuid, instance_uuid, host)):
            LOG.error('Rejected move_aborted: its arguments must be non-empty strings')
            return
        try:
            self.moves.aborted(ctxt, migration_uuid, instance_uuid, host)
        except migrations.MigrationNotFound as exc:
            LOG.error('Rejected move_aborted: %s', exc)

    def _guarded(self, method: str, ctxt, instance: Instance, migration: Migration,
                 work) -> None:
        """Run a move step; one that fails unexpectedly ends the move in error, on its source."""
        try:
            work()
        except migrations.MigrationNotFound as exc:
            LOG.error('Rejected %s: %s', method, exc)
        except Exception as exc:  # the instance must not stay moving
            LOG.exception('%s of instance %s failed unexpectedly', method, instance.uuid)
            try:
                self.moves.placement_undo(instance.uuid, migration.uuid)
            finally:
                self.moves.give_up(ctxt, instance, migration, None, (
                    f'{method} failed unexpectedly: {type(exc).__name__}: {exc}'))

    def _set_error(self, uuid: str, host: str | None, message: str) -> None:
        try:
            with self.engine.begin() as conn:
                instances.set_error(conn, uuid, message=message, details=message,
                                         host=host)
                build_plans.finish(conn, uuid, None)
            metrics.BUILDS_ENDED.labels('error').inc()
        except Exception:  # already reporting a failure
            LOG.exception('Could not set instance %s to ERROR either', uuid)
