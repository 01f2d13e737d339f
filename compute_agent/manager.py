"""The compute agent's RPC endpoint (API 1.6): build, terminate or discard an instance; a move's steps.

The agent serves one host or many (``hosted_host``); each message names
the host it is for (a build: its first Selection; a termination: ``host``,
or, from an API 1.1 sender, the host that holds the instance). A message for
a stopped hosted host waits until that host starts.

``build_and_run_instance``: build through ``InstanceBuilder`` (local
resource check, then the driver). Success: the cell conductor hears the
instance is ACTIVE on this host and node, with the attempt. Failure: the
cell conductor gets ``reschedule_build`` with the attempt and the
alternates left (``host_list[1:]``); it removes this host's allocation and
tries the next one. The agent itself never unclaims a build: the claim was
made for this host by someone else, and the conductor that reschedules owns
the unclaim.

``terminate_instance``: destroy through the driver, remove the instance's
allocations from Placement, report it DELETED.

``discard_instance``: destroy through the driver and nothing else; the cell
conductor sends it for a build this host finished after the build was moved
to another host while this one was down (the allocation is the new host's).

``rebuild_instance`` (API 1.5): an evacuation's destination rebuilds the
instance alone (its source is down); like ``finish_move``, it reports
``move_finished`` or, failed, ``reschedule_move`` with the alternates left.
``live_migration_abort`` and ``live_migration_force_complete`` (API 1.6)
act on the source's copy of a live migration (``compute_agent/move_copies.py``):
an abort stops it, or refuses it if it has not begun, and the cell
conductor hears ``move_aborted`` from the hand-over; the instance runs on
here. Too late (the copy is over), the abort changes nothing.

``guest_state`` and ``guests`` (API 1.7, calls) say what a host holds: an
instance a step of whose move is under way here (``moving``), running,
stopped (handed over), or absent; the cell conductor's stalled-move check
asks them before it finishes or rolls back a move that made no progress.

A source's ``hand_over`` returns once its copy has begun on a thread of its
own (``move_copies.MoveCopies.run``): the copy lasts as long as the disk
takes, and the handler threads stay free for the other messages of every
host the agent serves (their moves' other steps, an abort of that very
copy). A graceful stop waits for the copies as for the handlers.

Handlers log and return on a bad message (the sender cast and is gone).
"""
from __future__ import annotations

import contextlib
import datetime
import logging
import threading
from typing import Iterator, Mapping

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from compute_agent import move_copies, moves
from compute_agent.hosted_host import HostedHost
from compute_agent.rpcapi import ComputeAPI, DiscardNotSupported
from compute_agent.virt.driver import CopyControl, MoveAborted
from conductor.cell.rpcapi import CellConductorAPI
from placement.client.pending_unclaims import PendingUnclaims

# isort: split
import oslo_messaging as messaging
import tenacity

from placement.client import PlacementClient
from rpc_schemas.build_attempt import FAILED, OK, BuildAttempt
from rpc_schemas.instance import ACTIVE, DELETED, Instance
from rpc_schemas.instance_update import InstanceUpdate
from rpc_schemas.migration import Migration
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection

LOG = logging.getLogger(__name__)

# A build still going this long after it began is said to have begun
# (build_started: task_state spawning). One that ends sooner goes from
# scheduling to its end without it: a cast and a cell database transaction
# for every build slowed the embedded demo's boots by about a fifth (three
# runs each, 300 instances: 6.4-8.1 s against 5.2-7.0 s), for a state no
# one would have seen; with the delay they were within the noise.
SPAWNING_AFTER_SECONDS = 0.5

# A build's report (built, or failed with its alternates) the broker refused
# is sent again for this long. A refused message was not delivered, so a
# second send cannot report twice; a report given up on leaves the build to
# the cell conductor's stalled-build check ([conductor] build_timeout).
# Seen with a RabbitMQ cluster: a quorum queue without a majority refuses
# publishes (541) until it has one again, for about as long as its nodes
# take to come back.
REPORT_RETRY_SECONDS = 60.0


def send_report(instance_uuid: str, what: str, send, *,
                timeout: float = REPORT_RETRY_SECONDS, wait=None) -> None:
    """``send()`` a build's report, again while the broker refuses it, for ``timeout`` seconds."""
    def refused(retry_state) -> None:
        LOG.warning('The broker refused the report that instance %s %s (%s); sending it '
                    'again', instance_uuid, what, retry_state.outcome.exception())

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(messaging.MessageDeliveryFailure),
        wait=wait or tenacity.wait_exponential(multiplier=0.5, max=5.0),
        stop=tenacity.stop_after_delay(timeout), before_sleep=refused, reraise=True)
    try:
        retrying(send)
    except messaging.MessageDeliveryFailure:
        LOG.error('Gave up reporting that instance %s %s after %.0f s of refusals; the '
                  'cell conductor\'s stalled-build check ([conductor] build_timeout) '
                  'will move it', instance_uuid, what, timeout)
        raise


def _check_move(instance, request_spec, migration, host_list) -> str | None:
    """What is wrong with a move step's arguments, or None."""
    if not isinstance(migration, Migration):
        return f'migration must be a Migration payload, got {type(migration).__name__}'
    return _check_build(instance, request_spec, host_list)


def _check_build(instance, request_spec, host_list) -> str | None:
    """What is wrong with build_and_run_instance's arguments, or None."""
    for name, value, cls in (('instance', instance, Instance),
                             ('request_spec', request_spec, RequestSpec)):
        if not isinstance(value, cls):
            return f'{name} must be a {cls.NAME} payload, got {type(value).__name__}'
    if (not isinstance(host_list, list) or not host_list
            or not all(isinstance(s, Selection) for s in host_list)):
        return 'host_list must be a non-empty list of Selection payloads'
    return None


class ComputeManager:
    """The RPC endpoint of an agent: finds the hosted host a message is for, and acts there."""

    target = messaging.Target(version='1.8')

    def __init__(self, *, hosts: Mapping[str, HostedHost], placement: PlacementClient,
                 conductor: CellConductorAPI, computes: ComputeAPI | None = None) -> None:
        self.hosts = hosts
        self.placement = placement
        self.conductor = conductor
        # The other hosts of the cell, for a move's host-to-host steps.
        self.computes = computes
        self.unclaims = PendingUnclaims(placement)
        self.copies = move_copies.MoveCopies()
        # (host, instance) whose move step runs here now: guest_state's 'moving'.
        self._moving: set[tuple[str, str]] = set()
        self._moving_lock = threading.Lock()

    @contextlib.contextmanager
    def _move_step(self, hosted: HostedHost, instance_uuid: str) -> Iterator[None]:
        key = (hosted.name, instance_uuid)
        with self._moving_lock:
            self._moving.add(key)
        try:
            yield
        finally:
            with self._moving_lock:
                self._moving.discard(key)

    # -- what a host holds (API 1.7, calls) -----------------------------------------
    def guest_state(self, ctxt, host: str, instance_uuid: str) -> str:
        hosted = self.hosts.get(host)
        if hosted is None:
            raise ValueError(f'host {host!r} is not served by this agent')
        with self._moving_lock:
            if (host, instance_uuid) in self._moving:
                return 'moving'
        if instance_uuid in hosted.driver.running():
            return 'running'
        if instance_uuid in hosted.driver.list_instances():
            return 'stopped'
        return 'absent'

    def guests(self, ctxt, host: str) -> list[str]:
        hosted = self.hosts.get(host)
        if hosted is None:
            raise ValueError(f'host {host!r} is not served by this agent')
        return list(hosted.driver.running())

    def build_and_run_instance(self, ctxt, instance: Instance, request_spec: RequestSpec,
                               host_list: list[Selection]) -> None:
        problem = _check_build(instance, request_spec, host_list)
        if problem:
            LOG.error('Rejected build_and_run_instance: %s', problem)
            return
        target = host_list[0].service_host
        hosted = self.hosts.get(target)
        if hosted is None:
            # Delivered here by a stale queue binding or a hand-made cast:
            # the conductor must try the alternates, so report it as a failed build.
            now = datetime.datetime.now(datetime.timezone.utc)
            attempt = BuildAttempt(
                host=target, nodename=host_list[0].nodename, start=now, finish=now,
                result=FAILED, reason=(f'build sent to {target}, which this agent '
                                       f'({", ".join(sorted(self.hosts)[:3])}'
                                       f'{", ..." if len(self.hosts) > 3 else ""}) '
                                       f'does not run'))
            self._after_build(ctxt, instance, request_spec, host_list, attempt)
            return
        hosted.run_or_hold(lambda: self._build(ctxt, hosted, instance, request_spec,
                                               host_list))

    def _build(self, ctxt, hosted: HostedHost, instance: Instance,
               request_spec: RequestSpec, host_list: list[Selection]) -> None:
        LOG.info('Building instance %s on %s', instance.uuid, hosted.name)
        timer = threading.Timer(SPAWNING_AFTER_SECONDS, self._tell_started,
                                (ctxt, instance, hosted))
        timer.daemon = True
        try:
            attempt = hosted.builder.build(instance, host_list[0], started=timer.start)
        finally:
            timer.cancel()
        if attempt is None:
            LOG.warning('Instance %s is already being built, or runs, on %s: this '
                        'second build of it is ignored', instance.uuid, hosted.name)
            return
        self._after_build(ctxt, instance, request_spec, host_list, attempt)

    def _tell_started(self, ctxt, instance: Instance, hosted: HostedHost) -> None:
        try:
            self.conductor.build_started(ctxt, instance.uuid, hosted.name)
        except Exception as exc:  # noqa: BLE001 - only task_state waits for it; the build goes on
            LOG.warning('Could not tell the cell conductor that the build of instance %s '
                        'began on %s (%s: %s); building all the same', instance.uuid,
                        hosted.name, type(exc).__name__, exc)

    def _after_build(self, ctxt, instance: Instance, request_spec: RequestSpec,
                     host_list: list[Selection], attempt: BuildAttempt) -> None:
        if attempt.result == OK:
            LOG.info('Instance %s built on %s', instance.uuid, attempt.host)
            update = InstanceUpdate(
                instance_uuid=instance.uuid, vm_state=ACTIVE, host=attempt.host,
                node=attempt.nodename, launched_at=attempt.finish, attempt=attempt)
            send_report(instance.uuid, 'built',
                        lambda: self.conductor.instance_update(ctxt, update))
            return
        LOG.warning('Build of instance %s failed: %s; handing %d alternate(s) to the '
                    'cell conductor (failed on %s)', instance.uuid, attempt.reason,
                    len(host_list) - 1, attempt.host)
        send_report(instance.uuid, 'failed', lambda: self.conductor.reschedule_build(
            ctxt, instance, request_spec, host_list[1:], attempt))

    def terminate_instance(self, ctxt, instance_uuid: str, host: str | None = None) -> None:
        if not isinstance(instance_uuid, str) or not instance_uuid:
            LOG.error('Rejected terminate_instance: instance_uuid must be a string, got %r',
                      instance_uuid)
            return
        hosted = self._host_for_terminate(instance_uuid, host)
        if hosted is None:
            LOG.error('Rejected terminate_instance of %s: it was sent to host %s, which '
                      'this agent does not run', instance_uuid, host)
            return
        hosted.run_or_hold(lambda: self._terminate(ctxt, hosted, instance_uuid))

    def discard_instance(self, ctxt, instance_uuid: str, host: str) -> None:
        if not isinstance(instance_uuid, str) or not instance_uuid or host not in self.hosts:
            LOG.error('Rejected discard_instance of %r: it names host %r, which this '
                      'agent does not run', instance_uuid, host)
            return
        hosted = self.hosts[host]
        hosted.run_or_hold(lambda: self._discard(hosted, instance_uuid))

    @staticmethod
    def _discard(hosted: HostedHost, instance_uuid: str) -> None:
        hosted.builder.destroy(instance_uuid)
        # INFO: most discards are a move's normal end (the source's copy after a
        # confirm or a live switch-over); the cell conductor that asks for one
        # because a build was moved away while this host was down warns itself.
        LOG.info('Instance %s destroyed on %s: another host owns it (a move\'s copy '
                 'left behind, or a build moved away while this host was down)',
                 instance_uuid, hosted.name)

    def _host_for_terminate(self, instance_uuid: str, host: str | None) -> HostedHost | None:
        if host is not None:
            return self.hosts.get(host)
        # An API 1.1 sender names no host: the one that holds the instance,
        # else (an agent of one host) that host.
        for hosted in self.hosts.values():
            if instance_uuid in hosted.driver.list_instances():
                return hosted
        if len(self.hosts) == 1:
            return next(iter(self.hosts.values()))
        return None

    def _terminate(self, ctxt, hosted: HostedHost, instance_uuid: str) -> None:
        hosted.builder.destroy(instance_uuid)
        # The instance is gone from this host either way; an allocation
        # Placement could not remove now is removed when it is back.
        self.unclaims.unclaim(instance_uuid)
        self.conductor.instance_update(ctxt, InstanceUpdate(
            instance_uuid=instance_uuid, vm_state=DELETED, host=hosted.name))
        LOG.info('Instance %s terminated on %s', instance_uuid, hosted.name)

    # -- a move: prep_move and finish_move on the destination, hand_over and
    # take_back on the source (compute API 1.4; compute_agent/moves.py) ---------
    def _move_host(self, method: str, host: str) -> HostedHost | None:
        hosted = self.hosts.get(host)
        if hosted is None:
            LOG.error('Rejected %s: it was sent to host %s, which this agent does not run',
                      method, host)
        return hosted

    def prep_move(self, ctxt, instance: Instance, request_spec: RequestSpec,
                  migration: Migration, host_list: list[Selection]) -> None:
        problem = _check_move(instance, request_spec, migration, host_list)
        if problem:
            LOG.error('Rejected prep_move: %s', problem)
            return
        hosted = self._move_host('prep_move', host_list[0].service_host)
        if hosted is not None:
            hosted.run_or_hold(lambda: self._prep_move(ctxt, hosted, instance, request_spec,
                                                       migration, host_list))

    def _prep_move(self, ctxt, hosted: HostedHost, instance: Instance,
                   request_spec: RequestSpec, migration: Migration,
                   host_list: list[Selection]) -> None:
        with self._move_step(hosted, instance.uuid):
            attempt = moves.prepare(hosted.builder, instance, migration, host_list[0])
        if attempt.result != OK:
            self._move_failed(ctxt, instance, request_spec, migration, host_list, attempt)
            return
        LOG.info('Move of instance %s prepared on %s; asking %s to hand it over',
                 instance.uuid, hosted.name, migration.source_host)
        self.computes.hand_over(ctxt, instance, request_spec, migration, host_list)

    def hand_over(self, ctxt, instance: Instance, request_spec: RequestSpec,
                  migration: Migration, host_list: list[Selection]) -> None:
        problem = _check_move(instance, request_spec, migration, host_list)
        if problem:
            LOG.error('Rejected hand_over: %s', problem)
            return
        hosted = self._move_host('hand_over', migration.source_host)
        if hosted is not None:
            hosted.run_or_hold(lambda: self._hand_over(ctxt, hosted, instance, request_spec,
                                                       migration, host_list))

    def _hand_over(self, ctxt, hosted: HostedHost, instance: Instance,
                   request_spec: RequestSpec, migration: Migration,
                   host_list: list[Selection]) -> None:
        try:
            control = self.copies.begin(migration.uuid)
        except move_copies.AbortedBeforeCopy:
            LOG.info('Live migration %s of instance %s was aborted before its copy began '
                     'on %s', migration.uuid, instance.uuid, hosted.name)
            self.conductor.move_aborted(ctxt, migration.uuid, instance.uuid, hosted.name)
            return
        # The copy on a thread of its own: this handler thread is free for the
        # next message at once (compute_agent/move_copies.py).
        self.copies.run(migration.uuid, lambda: self._copy(
            ctxt, hosted, instance, request_spec, migration, host_list, control))

    def _copy(self, ctxt, hosted: HostedHost, instance: Instance, request_spec: RequestSpec,
              migration: Migration, host_list: list[Selection], control: CopyControl) -> None:
        """The source's copy, then ``finish_move`` to the destination (or the failure reported)."""
        dest = host_list[0]
        copied = False
        try:
            self.conductor.move_started(ctxt, migration.uuid, dest.service_host)
            started = datetime.datetime.now(datetime.timezone.utc)
            with self._move_step(hosted, instance.uuid):
                why = moves.hand_over(hosted.builder, instance.uuid, control)
            copied = why is None
        except MoveAborted:
            LOG.info('Live migration %s of instance %s aborted during its copy; it still '
                     'runs on %s', migration.uuid, instance.uuid, hosted.name)
            self.conductor.move_aborted(ctxt, migration.uuid, instance.uuid, hosted.name)
            return
        finally:
            self.copies.end(migration.uuid, copied=copied)
        if why is not None:
            # The source cannot give it: no destination would do better. The
            # destination gives back what it promised the instance (prep_move).
            if dest.service_host != hosted.name:
                self._discard_promise(ctxt, dest.service_host, instance.uuid)
            attempt = BuildAttempt(host=dest.service_host, nodename=dest.nodename,
                                   start=started,
                                   finish=datetime.datetime.now(datetime.timezone.utc),
                                   result=FAILED, reason=why)
            self.conductor.reschedule_move(ctxt, instance, request_spec, migration, [],
                                           attempt)
            return
        LOG.info('Instance %s handed over by %s to %s', instance.uuid, hosted.name,
                 dest.service_host)
        self.computes.finish_move(ctxt, instance, request_spec, migration, host_list)

    def _discard_promise(self, ctxt, host: str, instance_uuid: str) -> None:
        try:
            self.computes.discard_instance(ctxt, host, instance_uuid)
        except (DiscardNotSupported, messaging.MessagingException) as exc:
            LOG.warning('Could not ask %s to give back what it promised instance %s: %s',
                        host, instance_uuid, exc)

    def finish_move(self, ctxt, instance: Instance, request_spec: RequestSpec,
                    migration: Migration, host_list: list[Selection]) -> None:
        problem = _check_move(instance, request_spec, migration, host_list)
        if problem:
            LOG.error('Rejected finish_move: %s', problem)
            return
        hosted = self._move_host('finish_move', host_list[0].service_host)
        if hosted is not None:
            hosted.run_or_hold(lambda: self._finish_move(ctxt, hosted, instance,
                                                         request_spec, migration, host_list))

    def _finish_move(self, ctxt, hosted: HostedHost, instance: Instance,
                     request_spec: RequestSpec, migration: Migration,
                     host_list: list[Selection]) -> None:
        with self._move_step(hosted, instance.uuid):
            attempt = moves.finish(hosted.builder, instance, migration, host_list[0])
        if attempt.result != OK:
            self._move_failed(ctxt, instance, request_spec, migration, host_list, attempt)
            return
        LOG.info('Instance %s moved to %s', instance.uuid, hosted.name)
        self.conductor.move_finished(ctxt, migration.uuid, instance.uuid, hosted.name,
                                     hosted.builder.nodename)

    def _move_failed(self, ctxt, instance: Instance, request_spec: RequestSpec,
                     migration: Migration, host_list: list[Selection],
                     attempt: BuildAttempt) -> None:
        LOG.warning('Move of instance %s failed on %s: %s; handing %d alternate(s) to the '
                    'cell conductor', instance.uuid, attempt.host, attempt.reason,
                    len(host_list) - 1)
        self.conductor.reschedule_move(ctxt, instance, request_spec, migration,
                                       host_list[1:], attempt)

    def rebuild_instance(self, ctxt, instance: Instance, request_spec: RequestSpec,
                         migration: Migration, host_list: list[Selection]) -> None:
        problem = _check_move(instance, request_spec, migration, host_list)
        if problem:
            LOG.error('Rejected rebuild_instance: %s', problem)
            return
        hosted = self._move_host('rebuild_instance', host_list[0].service_host)
        if hosted is not None:
            hosted.run_or_hold(lambda: self._rebuild(ctxt, hosted, instance, request_spec,
                                                     migration, host_list))

    def _rebuild(self, ctxt, hosted: HostedHost, instance: Instance,
                 request_spec: RequestSpec, migration: Migration,
                 host_list: list[Selection]) -> None:
        with self._move_step(hosted, instance.uuid):
            attempt = moves.rebuild(hosted.builder, instance, migration, host_list[0])
        if attempt.result != OK:
            self._move_failed(ctxt, instance, request_spec, migration, host_list, attempt)
            return
        LOG.info('Instance %s rebuilt on %s (evacuated from %s)', instance.uuid,
                 hosted.name, migration.source_host)
        self.conductor.move_finished(ctxt, migration.uuid, instance.uuid, hosted.name,
                                     hosted.builder.nodename)

    # -- a live migration's copy, on its source (compute API 1.6) ------------------
    def live_migration_abort(self, ctxt, instance_uuid: str, migration_uuid: str,
                             host: str) -> None:
        if not all(isinstance(v, str) and v for v in (instance_uuid, migration_uuid, host)):
            LOG.error('Rejected live_migration_abort: its arguments must be non-empty strings')
            return
        hosted = self._move_host('live_migration_abort', host)
        if hosted is not None:
            done = self.copies.abort(migration_uuid)
            LOG.info('Abort of live migration %s of instance %s on %s: %s', migration_uuid,
                     instance_uuid, host, done)

    def live_migration_force_complete(self, ctxt, instance_uuid: str, migration_uuid: str,
                                      host: str) -> None:
        if not all(isinstance(v, str) and v for v in (instance_uuid, migration_uuid, host)):
            LOG.error('Rejected live_migration_force_complete: its arguments must be '
                      'non-empty strings')
            return
        hosted = self._move_host('live_migration_force_complete', host)
        if hosted is not None:
            ended = self.copies.force_complete(migration_uuid)
            LOG.info('Force complete of live migration %s of instance %s on %s: %s',
                     migration_uuid, instance_uuid, host,
                     'the copy ends now' if ended else 'no copy runs: nothing to do')

    def take_back(self, ctxt, instance: Instance, migration: Migration, host: str,
                  same_host: bool = False) -> None:
        if (not isinstance(instance, Instance) or not isinstance(migration, Migration)
                or not isinstance(same_host, bool)):
            LOG.error('Rejected take_back: expected an Instance and a Migration payload '
                      '(and same_host a boolean)')
            return
        hosted = self._move_host('take_back', host)
        if hosted is not None:
            hosted.run_or_hold(lambda: self._take_back(hosted, instance, migration, same_host))

    @staticmethod
    def _take_back(hosted: HostedHost, instance: Instance, migration: Migration,
                   same_host: bool) -> None:
        why = moves.take_back(hosted.builder, instance, migration, same_host=same_host)
        if why is None:
            LOG.info('Instance %s runs on %s again (its move %s failed or was reverted)',
                     instance.uuid, hosted.name, migration.uuid)
        else:
            LOG.error('Instance %s could not be run again on %s after its move %s: %s',
                      instance.uuid, hosted.name, migration.uuid, why)
