"""Builds on a host that went down: the cell conductor moves them to their alternates.

A build is cast to one compute host and the cell hears of it again only
when that host reports (ACTIVE, or a failure with the alternates). A host
that dies meanwhile would leave the instance in BUILD and its claim in
Placement for good. So every ``[conductor] dead_host_check_interval`` the
cell conductor reads the build plans (``cellplane/objects/build_plans.py``)
cast to a host whose compute service has not been heard of for ``[service]
service_down_time``, and for each one it wins (``build_plans.take``: one
conductor per plan, however many run in the cell) it does what a failed
build on that host would have done: the reschedule (``reschedule.py``)
records the attempt as "host went down", removes the claim, and claims and
casts the next alternate, or sets ERROR naming every host tried.

Fencing is in the manager: if the dead host comes back and reports a build
that was moved, the report is refused and the instance destroyed there
(without touching Placement, whose allocation is the new host's).
"""
from __future__ import annotations

import datetime
import logging

from sqlalchemy.engine import Engine
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db.columns import utcnow
from cellplane.objects import build_plans
from conductor.cell.reschedule import Rescheduler
from rpc_schemas.build_attempt import FAILED, BuildAttempt

LOG = logging.getLogger(__name__)


def went_down_reason(plan: build_plans.BuildPlan, service_down_time: float) -> str:
    if plan.host_last_seen is None:
        return (f'host {plan.host} went down during the build: its compute service '
                f'never reported')
    return (f'host {plan.host} went down during the build: no heartbeat since '
            f'{plan.host_last_seen:%Y-%m-%d %H:%M:%S} UTC (service_down_time '
            f'{service_down_time:g} s)')


class DeadHostBuilds:
    """The periodic check of one cell conductor (``check`` is the task's body)."""

    def __init__(self, *, engine: Engine, rescheduler: Rescheduler,
                 service_down_time: float) -> None:
        self._engine = engine
        self._rescheduler = rescheduler
        self._service_down_time = service_down_time

    def check(self) -> int:
        """Move the builds of hosts that are down; how many this conductor moved."""
        try:
            plans = build_plans.on_hosts_down(
                self._engine, service_down_time=self._service_down_time)
        except sa.exc.SQLAlchemyError as exc:
            LOG.warning('Could not look for builds on hosts that went down (%s); '
                        'trying again at the next check', exc)
            return 0
        moved = 0
        for plan in plans:
            try:
                if not build_plans.take(self._engine, plan):
                    continue    # another conductor moved it, or the build ended
                self._move(plan)
                moved += 1
            except Exception:  # noqa: BLE001 - one plan must not stop the others
                LOG.exception('Moving the build of %s off %s failed; trying again at '
                              'the next check', plan.instance.uuid, plan.host)
        if moved:
            LOG.warning('Moved %d build(s) off compute host(s) that went down', moved)
        return moved

    def _move(self, plan: build_plans.BuildPlan) -> None:
        now = utcnow()
        attempt = BuildAttempt(
            host=plan.host, nodename=plan.host_list[0].nodename,
            start=plan.cast_at.replace(tzinfo=datetime.timezone.utc),
            finish=now.replace(tzinfo=datetime.timezone.utc), result=FAILED,
            reason=went_down_reason(plan, self._service_down_time))
        LOG.warning('Instance %s: %s; moving it to its next alternate',
                    plan.instance.uuid, attempt.reason)
        self._rescheduler.reschedule(new_context(), plan.instance, plan.request_spec,
                                     plan.alternates, attempt)
