"""The reschedule: a build failed on a host, so the cell conductor moves it to an alternate.

Inside the cell only, never asking the scheduler or the top level:

1. record the failed attempt (action event) and remove the failed host's
   allocation in Placement (the unclaim of the claim that host was built on);
2. walk the remaining alternates in order: skip those whose compute service
   is down (``service_down_time``, recorded as such) and those that would
   break the server group's hard policy (``group_check``: where the other
   members are now, asked of Placement; recorded with the reason); claim each other one's
   own allocation request for the instance (project and user from the
   request spec); a refused claim is recorded with Placement's reason and
   the walk goes on;
3. cast ``build_and_run_instance`` to the first host whose claim held, with
   the alternates after it;
4. when none is left (or ``[conductor] max_attempts`` builds were tried),
   set the instance to ERROR with a fault listing every host tried and why,
   and leave no allocation of it in Placement.

Each claim made here has its unclaim: the agent that received the build
reports a failure back here, and step 1 removes it.

The build plan (``cellplane/objects/build_plans.py``) follows the build: it
names the alternate cast to before the cast, is ended with no owner when the
walk ends in ERROR, and removed when the instance was deleted. A failure
reported by a host that no longer owns the instance (its build was moved
while it was down) changes nothing: its claim is already another host's.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Sequence

from sqlalchemy.engine import Engine

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.context import RequestContext
from cellplane.db import away
from cellplane.objects import build_plans, compute_nodes, instance_actions, instances, services
from compute_agent.rpcapi import ComputeAPI
from conductor import metrics
from conductor.cell import group_check

# isort: split
import oslo_messaging as messaging

from placement.client import ClaimConflict, PlacementClient, PlacementClientError, PlacementUnreachable
from placement.client.pending_unclaims import PendingUnclaims
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.instance import SCHEDULING, Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class RescheduleOutcome:
    """Where the build went next (``host``), or why the instance is in ERROR (``fault``)."""
    host: str | None = None
    fault: str | None = None


class Rescheduler:
    """Reschedules failed builds of one cell; built by the cell conductor from its config."""

    def __init__(self, *, engine: Engine, placement: PlacementClient,
                 compute: ComputeAPI, max_attempts: int,
                 service_down_time: float | None = None,
                 database_retry_timeout: float = 0.0) -> None:
        self._engine = engine
        self._placement = placement
        # Allocations of instances ending in ERROR that Placement could not
        # remove at once: removed later (``pending.retry``, periodic).
        self.pending = PendingUnclaims(placement)
        self._compute = compute
        self._max_attempts = max_attempts
        # None: alternates are tried whatever their liveness.
        self._service_down_time = service_down_time
        self._database_retry_timeout = database_retry_timeout

    def reschedule(self, ctxt: RequestContext, instance: Instance,
                   request_spec: RequestSpec, host_list: Sequence[Selection],
                   attempt: BuildAttempt, *, taken: bool = False) -> RescheduleOutcome:
        """Move the build that failed (``attempt``) to the first alternate of ``host_list`` that takes it.

        ``taken``: the caller took the plan off ``attempt.host``
        (``build_plans.take``, a stalled build), so that host's word is
        fenced already; otherwise ``attempt`` is that host's own report, and
        ignored if the build was moved away from it.
        """
        uuid = instance.uuid
        # The report is taken in one transaction before anything else is
        # done, so it can be written again while the cell database is away.
        owner, action_id, still_wanted = away.retry_while_away(
            lambda: self._take_report(ctxt, uuid, request_spec, attempt, taken),
            timeout=self._database_retry_timeout)
        if owner is not None:
            LOG.warning('Ignored the failed build of instance %s on %s: the build '
                        'was moved %s while %s was down', uuid, attempt.host,
                        owner.describe(), attempt.host)
            return RescheduleOutcome()
        if not still_wanted:
            LOG.info('Instance %s was deleted while it was built on %s; not '
                     'rescheduling it', uuid, attempt.host)
            leftover = self.remove_allocations(uuid)
            if leftover:
                LOG.error('Deleted instance %s: %s', uuid, leftover)
            return RescheduleOutcome()
        LOG.info('Build of instance %s failed on %s (%s); %d alternate(s) left',
                 uuid, attempt.host, attempt.reason, len(host_list))

        try:
            self._placement.unclaim(uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            if isinstance(exc, PlacementClientError) and exc.status < 500:
                leftover = (f'Remove it with DELETE /allocations/{uuid}')
            else:
                self.pending.later(uuid, str(exc))
                leftover = 'It is removed once Placement answers'
            return self._give_up(action_id, uuid, attempt.host, ending=(
                f'the allocation of the failed build on {attempt.host} could not be '
                f'removed from Placement ({exc}), so no alternate was claimed. '
                f'{leftover}'), unclaim=False)

        with self._engine.connect() as conn:
            events = instance_actions.history(conn, uuid)
        builds = [e for e in events if e.event == instance_actions.EVENT_BUILD]
        built_on = {e.host for e in builds}
        remaining = list(host_list)
        silent = self._silent_hosts(remaining)
        while remaining:
            if len(builds) >= self._max_attempts:
                untried = ', '.join(s.service_host for s in remaining)
                return self._give_up(action_id, uuid, attempt.host, ending=(
                    f'[conductor] max_attempts = {self._max_attempts} builds reached; '
                    f'alternates not tried: {untried}'))
            selection, remaining = remaining[0], remaining[1:]
            if selection.service_host in built_on:
                LOG.info('Skipping alternate %s for instance %s: a build already '
                         'failed there', selection.service_host, uuid)
                continue
            if selection.service_host in silent:
                self._skip_down(action_id, uuid, selection, silent[selection.service_host])
                continue
            broken = group_check.breaks_group(self._placement, request_spec, uuid, selection)
            if broken is not None:
                self._skip(action_id, uuid, selection, broken)
                continue
            refused = self._claim(ctxt, action_id, instance, request_spec, selection,
                                  remaining)
            if refused is None:
                return RescheduleOutcome(host=selection.service_host)
            if isinstance(refused, PlacementUnreachable):
                return self._give_up(action_id, uuid, attempt.host, ending=(
                    f'Placement could not be reached to claim an alternate: {refused}'))
        return self._give_up(action_id, uuid, attempt.host, ending=(
            'no alternate host left: every host the scheduler offered was tried'))

    def _take_report(self, ctxt, uuid: str, request_spec: RequestSpec, attempt: BuildAttempt,
                     taken: bool):
        """(the owner fencing the report or None, the create action's id, still wanted?)."""
        with self._engine.begin() as conn:
            # The host's own report takes the plan it owns, as the stalled
            # check does: of the two, one reschedules, the other is fenced.
            if taken or not build_plans.take_reported(conn, uuid, attempt.host):
                owner = build_plans.fenced(conn, uuid, None if taken else attempt.host)
                if owner is not None:
                    return owner, None, False
            action_id = instance_actions.ensure_create_action(
                conn, uuid, request_id=ctxt.request_id, user_id=request_spec.user_id,
                project_id=request_spec.project_id)
            instance_actions.record_build_attempt(conn, action_id, attempt)
            still_wanted = instances.set_building(conn, uuid, SCHEDULING)
            if not still_wanted:
                build_plans.forget(conn, uuid)
        return None, action_id, still_wanted

    def _silent_hosts(self, host_list: Sequence[Selection]) -> dict:
        if self._service_down_time is None:
            return {}
        return services.silent_hosts(
            self._engine, {s.service_host for s in host_list}, compute_nodes.COMPUTE_BINARY,
            service_down_time=self._service_down_time)

    def _skip_down(self, action_id: int, uuid: str, selection: Selection,
                   last_seen) -> None:
        since = f'since {last_seen:%Y-%m-%d %H:%M:%S} UTC' if last_seen else 'ever'
        self._skip(action_id, uuid, selection, (
            f'host {selection.service_host} is down: no heartbeat {since} '
            f'(service_down_time {self._service_down_time:g} s)'))

    def _skip(self, action_id: int, uuid: str, selection: Selection, reason: str) -> None:
        """Record an alternate not tried, and why."""
        LOG.info('Alternate %s for instance %s not usable: %s', selection.service_host,
                 uuid, reason)
        now = instance_actions.utcnow()
        with self._engine.begin() as conn:
            instance_actions.record_refused_claim(conn, action_id, selection, reason,
                                                  now, now)

    def _claim(self, ctxt, action_id: int, instance: Instance, request_spec: RequestSpec,
               selection: Selection, rest: list[Selection]) -> Exception | None:
        """Claim ``selection`` and cast the build there; the reason it failed, or None."""
        start = instance_actions.utcnow()
        try:
            self._placement.claim(
                instance.uuid, selection.allocations,
                project_id=request_spec.project_id, user_id=request_spec.user_id)
        except ClaimConflict as exc:
            why = 'lost a race' if exc.lost_race else 'refused'
            reason = f'Placement {why} the claim: {exc.detail}'
            failure: Exception = exc
        except PlacementClientError as exc:
            reason = f'Placement answered {exc.status} ({exc.code}): {exc.detail}'
            failure = exc
        except PlacementUnreachable as exc:
            return exc
        else:
            with self._engine.begin() as conn:
                # Scheduling until the host says it began (build_started).
                still_wanted = instances.set_building(conn, instance.uuid, SCHEDULING)
                # Before the cast: the host's report must find itself named.
                if still_wanted:
                    build_plans.record(conn, instance, request_spec, [selection, *rest])
                else:
                    build_plans.forget(conn, instance.uuid)
            if not still_wanted:
                LOG.info('Instance %s was deleted during its reschedule; removing the '
                         'claim just made on %s', instance.uuid, selection.service_host)
                self._placement.unclaim(instance.uuid)
                return None
            try:
                self._compute.build_and_run_instance(
                    ctxt, selection.service_host, instance, request_spec,
                    [selection, *rest])
            except messaging.MessagingException as exc:
                reason = f'the build could not be sent to {selection.service_host}: {exc}'
                failure = exc
                # Nobody will build it there: the claim just made is undone.
                try:
                    self._placement.unclaim(instance.uuid)
                except (PlacementUnreachable, PlacementClientError) as unclaim_exc:
                    return unclaim_exc if isinstance(
                        unclaim_exc, PlacementUnreachable) else exc
            else:
                LOG.info('Instance %s rescheduled to %s (claimed, %d alternate(s) '
                         'behind it)', instance.uuid, selection.service_host, len(rest))
                return None
        LOG.info('Alternate %s for instance %s not usable: %s',
                 selection.service_host, instance.uuid, reason)
        with self._engine.begin() as conn:
            instance_actions.record_refused_claim(conn, action_id, selection, reason,
                                              start, instance_actions.utcnow())
        return failure

    def remove_allocations(self, uuid: str) -> str | None:
        """Unclaim ``uuid`` (it will not be claimed for again); None if done, else what is left.

        One Placement could not remove (down, or a 5xx) is kept and removed
        once it answers; one it refused is for the operator.
        """
        try:
            self._placement.unclaim(uuid)
        except PlacementUnreachable as exc:
            self.pending.later(uuid, str(exc))
            return (f'removing its allocations from Placement failed ({exc}); they '
                    f'are removed once Placement answers')
        except PlacementClientError as exc:
            if exc.status >= 500:
                self.pending.later(uuid, str(exc))
                return (f'removing its allocations from Placement failed ({exc}); they '
                        f'are removed once Placement answers')
            return (f'removing its allocations from Placement failed ({exc}): remove '
                    f'them with DELETE /allocations/{uuid}')
        return None

    def _give_up(self, action_id: int, uuid: str, last_host: str, *, ending: str,
                 unclaim: bool = True) -> RescheduleOutcome:
        """ERROR with a fault naming every host tried and why; no allocation left."""
        leftover = self.remove_allocations(uuid) if unclaim else None
        if leftover:
            ending += f'; {leftover}'
        with self._engine.begin() as conn:
            tried = instance_actions.describe_history(instance_actions.history(conn, uuid))
            hosts = '; '.join(tried.splitlines())
            message = f'Build failed on every host tried ({hosts}); {ending}'
            details = f'Hosts tried, in order:\n{tried}\nThen: {ending}'
            instances.set_error(conn, uuid, message=message, details=details,
                                     host=last_host)
            instance_actions.finish_action(conn, action_id, message=message)
            build_plans.finish(conn, uuid, None)
        metrics.BUILDS_ENDED.labels('error').inc()
        LOG.warning('Instance %s is in ERROR: %s', uuid, message)
        return RescheduleOutcome(fault=details)
