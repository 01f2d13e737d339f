"""Stalled builds: the cell conductor moves them to their alternates.

A build is cast to one compute host and the cell hears of it again only
when that host reports (ACTIVE, or a failure with the alternates). A host
that dies meanwhile, a cast lost on the way (a broker restart, a super
conductor killed between recording the build and casting it) or a build
that hangs would leave the instance in BUILD and its claim in Placement
for good. So every ``[conductor] stalled_build_check_interval`` the cell
conductor reads the build plans (``cellplane/objects/build_plans.py``) cast
to a host whose compute service has not been heard of for ``[service]
service_down_time``, those the host never said it started (its heartbeat
lists the builds it holds) within ``[conductor] build_start_timeout`` of
their cast, and those cast longer than ``[conductor] build_timeout`` ago,
and for each one it wins (``build_plans.take``: one conductor per plan,
however many run in the cell) it does what a failed build on that host
would have done: the reschedule (``reschedule.py``) records the attempt
("host went down", "never started", or "did not end within
build_timeout"), removes the
claim, and claims and casts the next alternate, or sets ERROR naming every
host tried.

Many hosts silent at once is not many hosts dying: it is the cell's bus
or this conductor that does not hear them (a broker restart longer than
``service_down_time``). Moving their builds would put every instance in
ERROR for nothing, so while at least ``[conductor] mass_silence_threshold``
of the cell's compute hosts (and two or more) are silent, builds are not
moved off silent hosts, and a warning says why (Kubernetes' node lifecycle
controller stops evicting in an "unhealthy zone" for the same reason).

Fencing is in the manager: if the host reports a build that was moved
(it came back, or its build was only slow), the report is refused and the
instance destroyed there (without touching Placement, whose allocation is
the new host's).
"""
from __future__ import annotations

import datetime
import logging

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.context import new_context
from cellplane.db.columns import utcnow
from cellplane.objects import build_plans, services
from cellplane.objects.compute_nodes import COMPUTE_BINARY
from conductor import metrics
from conductor.cell.reschedule import Rescheduler
from rpc_schemas.build_attempt import FAILED, BuildAttempt

LOG = logging.getLogger(__name__)


def stalled_cause(plan: build_plans.BuildPlan, build_start_timeout: float,
                  now: datetime.datetime) -> str:
    """Why ``plan`` is stalled, as a metric label: host_down, not_started, timed_out or lease_expired."""
    if plan.hostless:
        return 'lease_expired'
    if plan.host_down:
        return 'host_down'
    if (build_start_timeout and plan.started_at is None
            and (now - plan.cast_at).total_seconds() > build_start_timeout):
        return 'not_started'
    return 'timed_out'


def stalled_reason(plan: build_plans.BuildPlan, service_down_time: float,
                   build_timeout: float, build_start_timeout: float = 0,
                   now: datetime.datetime | None = None) -> str:
    """Why the build of ``plan`` is taken off its host, in one line."""
    now = now or utcnow()
    cause = stalled_cause(plan, build_start_timeout, now)
    if cause == 'lease_expired':
        return (f'its reschedule off host {plan.host} named no next host within '
                f'{build_plans.RESCHEDULE_LEASE_SECONDS} s of taking it (at '
                f'{plan.cast_at:%Y-%m-%d %H:%M:%S} UTC): its conductor stopped')
    if cause == 'not_started':
        return (f'host {plan.host} never said it started the build within '
                f'build_start_timeout {build_start_timeout:g} s of its cast at '
                f'{plan.cast_at:%Y-%m-%d %H:%M:%S} UTC (the cast was lost on its way '
                f'to the host)')
    if not plan.host_down:
        return (f'the build on host {plan.host} did not end within build_timeout '
                f'{build_timeout:g} s (cast at {plan.cast_at:%Y-%m-%d %H:%M:%S} UTC; '
                f'the cast was lost or the build hangs)')
    if plan.host_last_seen is None:
        return (f'host {plan.host} went down during the build: its compute service '
                f'never reported')
    return (f'host {plan.host} went down during the build: no heartbeat since '
            f'{plan.host_last_seen:%Y-%m-%d %H:%M:%S} UTC (service_down_time '
            f'{service_down_time:g} s)')


class StalledBuilds:
    """The periodic check of one cell conductor (``check`` is the task's body)."""

    def __init__(self, *, engine: Engine, rescheduler: Rescheduler,
                 service_down_time: float, build_timeout: float = 0,
                 build_start_timeout: float = 0,
                 mass_silence_threshold: float = 0.55) -> None:
        self._engine = engine
        self._rescheduler = rescheduler
        self._service_down_time = service_down_time
        self._build_timeout = build_timeout
        self._build_start_timeout = build_start_timeout
        self._mass_silence_threshold = mass_silence_threshold

    def check(self) -> int:
        """Move the stalled builds; how many this conductor moved."""
        try:
            plans = build_plans.stalled(
                self._engine, service_down_time=self._service_down_time,
                build_timeout=self._build_timeout,
                build_start_timeout=self._build_start_timeout)
        except sa.exc.SQLAlchemyError as exc:
            LOG.warning('Could not look for stalled builds (%s); trying again at the '
                        'next check', exc)
            return 0
        if any(p.host_down for p in plans) and self._mass_silence():
            plans = [p for p in plans if not p.host_down]
        moved = 0
        for plan in plans:
            try:
                if not build_plans.take(self._engine, plan):
                    continue    # another conductor moved it, or the build ended
                self._move(plan)
                moved += 1
            except Exception:  # one plan must not stop the others
                LOG.exception('Moving the build of %s off %s failed; trying again at '
                              'the next check', plan.instance.uuid, plan.host)
        if moved:
            LOG.warning('Moved %d stalled build(s) to their alternates', moved)
        return moved

    def _mass_silence(self) -> bool:
        """Whether so many compute hosts are silent that it must be the bus, not the hosts."""
        if not self._mass_silence_threshold:
            return False
        silent, hosts = services.count_silent(self._engine, COMPUTE_BINARY,
                                              service_down_time=self._service_down_time)
        if silent < 2 or silent < self._mass_silence_threshold * hosts:
            return False
        LOG.warning('%d of the %d compute hosts of this cell are silent: taken for a '
                    'problem of the message bus or of this conductor, not of the hosts; '
                    'no build is moved off a silent host while it lasts ([conductor] '
                    'mass_silence_threshold %g)', silent, hosts,
                    self._mass_silence_threshold)
        return True

    def _move(self, plan: build_plans.BuildPlan) -> None:
        now = utcnow()
        attempt = BuildAttempt(
            host=plan.host, nodename=plan.host_list[0].nodename,
            start=plan.cast_at.replace(tzinfo=datetime.timezone.utc),
            finish=now.replace(tzinfo=datetime.timezone.utc), result=FAILED,
            reason=stalled_reason(plan, self._service_down_time, self._build_timeout,
                                  self._build_start_timeout, now))
        LOG.warning('Instance %s: %s; moving it to its next alternate',
                    plan.instance.uuid, attempt.reason)
        metrics.RESCHEDULES.labels(
            stalled_cause(plan, self._build_start_timeout, now)).inc()
        self._rescheduler.reschedule(new_context(), plan.instance, plan.request_spec,
                                     plan.alternates, attempt, taken=True)
