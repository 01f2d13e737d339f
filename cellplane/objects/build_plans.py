"""Builds in flight (``build_plans``, in each cell DB): where each instance's build was cast, and what moving it needs.

One row per instance of the cell that is not deleted: the instance and
request spec as sent, the host list (the selection of the host the build was
cast to, then the alternates left behind it), when it was cast, and
``host``: the host that owns the instance. The super conductor writes it in
the transaction that creates the instance in the cell (``record``); the cell
conductor moves it at each reschedule (``record`` again), marks it ended
when the build ends (``finish``: ACTIVE on a host, or ERROR on none) and
removes it when the instance is deleted (``forget``).

Two things read it:

- the cell conductor's check for stalled builds (``stalled``): builds not
  ended whose host's compute service has not been heard of for
  ``service_down_time``; builds the host never said it started
  (``started_on`` as it starts, API 1.4, or ``mark_started`` from its
  heartbeats) within ``build_start_timeout`` of
  their cast (the cast was lost); and builds cast longer than
  ``build_timeout`` ago (lost, or hanging). ``take`` lets exactly one
  conductor move a plan (a compare-and-set on its cast time, so several
  conductors of a cell, on PostgreSQL or SQLite, never move a build twice);
- fencing (``fenced``): a build result from a host that does not own the
  instance comes from a host whose build was moved while it was down, and
  is not applied.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.cell.models import build_plans, services
from cellplane.db.columns import naive_utc, utcnow
from cellplane.objects.compute_nodes import COMPUTE_BINARY
from cellplane.objects.services import Liveness
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection


@dataclasses.dataclass(frozen=True)
class BuildPlan:
    instance: Instance
    request_spec: RequestSpec
    host_list: list[Selection]
    cast_at: datetime.datetime
    # When the host's compute service was last heard of (None: never).
    host_last_seen: datetime.datetime | None = None
    # Whether that is longer ago than service_down_time.
    host_down: bool = True
    # When the host's heartbeat first listed the build (None: never).
    started_at: datetime.datetime | None = None
    # Taken off its host (``take``) by a reschedule that has not named the
    # next one: its taker stopped, or is still at it after RESCHEDULE_LEASE_SECONDS.
    hostless: bool = False

    @property
    def host(self) -> str:
        """The host the build was cast to."""
        return self.host_list[0].service_host

    @property
    def alternates(self) -> list[Selection]:
        return self.host_list[1:]


@dataclasses.dataclass(frozen=True)
class Owner:
    """Who owns an instance that has a plan: ``host``, or None: nobody.

    Nobody, either because the build ended in ERROR, or because it is being
    moved (``moving``: taken off its host, no alternate named yet).
    """

    host: str | None
    moving: bool = False

    def describe(self) -> str:
        """How the build left the host: ``to cmp2``, ``and ended in ERROR``, or ``to an alternate (being claimed)``."""
        if self.host:
            return f'to {self.host}'
        return 'to an alternate (being claimed)' if self.moving else 'and ended in ERROR'


def _values(instance: Instance, request_spec: RequestSpec | dict,
            host_list: Sequence[Selection], now: datetime.datetime) -> dict:
    # A spec already in primitive form is shared by every plan of one boot.
    spec = request_spec if isinstance(request_spec, dict) else request_spec.to_primitive()
    return dict(host=host_list[0].service_host, instance=instance.to_primitive(),
                request_spec=spec, host_list=[s.to_primitive() for s in host_list],
                cast_at=now, started_at=None, ended_at=None, updated_at=now)


def record(conn: Connection, instance: Instance, request_spec: RequestSpec,
           host_list: Sequence[Selection]) -> None:
    """The build of ``instance`` was cast to ``host_list[0]``, with ``host_list[1:]`` behind it."""
    now = utcnow()
    values = _values(instance, request_spec, host_list, now)
    moved = conn.execute(build_plans.update().where(
        build_plans.c.instance_uuid == instance.uuid).values(**values)).rowcount
    if not moved:
        conn.execute(build_plans.insert().values(instance_uuid=instance.uuid,
                                                 created_at=now, **values))


def record_first(conn: Connection, request_spec: RequestSpec,
                 placed: Sequence[tuple[Instance, Sequence[Selection]]]) -> None:
    """``record`` for instances of one boot just inserted, which have no plan yet: one statement."""
    now = utcnow()
    spec = request_spec.to_primitive()
    conn.execute(build_plans.insert(), [
        dict(instance_uuid=instance.uuid, created_at=now,
             **_values(instance, spec, host_list, now))
        for instance, host_list in placed])


# Built once: each report of a build runs them (see instances.py's _APPLY).
_FINISH = build_plans.update().where(
    build_plans.c.instance_uuid == sa.bindparam('b_instance_uuid'))
_OWNER = sa.select(build_plans.c.host, build_plans.c.ended_at).where(
    build_plans.c.instance_uuid == sa.bindparam('b_instance_uuid'))


def finish(conn: Connection, instance_uuid: str, host: str | None) -> None:
    """The build ended: ``host`` runs the instance (None: no host, it is in ERROR)."""
    now = utcnow()
    conn.execute(_FINISH, {'b_instance_uuid': instance_uuid, 'host': host,
                           'ended_at': now, 'updated_at': now})


def forget(conn: Connection, instance_uuid: str) -> None:
    """The instance is deleted (or was never placed): nothing to move or fence."""
    conn.execute(build_plans.delete().where(build_plans.c.instance_uuid == instance_uuid))


def mark_started(engine: Engine, building: Sequence[tuple[str, str]]) -> int:
    """Hosts said they hold these builds (``(host, instance_uuid)`` pairs); how many plans that started.

    Only a plan cast to that host, not ended and not yet started is
    marked: a host that lists a build moved away from it changes nothing.
    """
    if not building:
        return 0
    now = utcnow()
    # One statement, its parameters apart (an executemany): compiled once
    # however many builds a heartbeat of a thousand hosts lists.
    statement = build_plans.update().where(
        build_plans.c.instance_uuid == sa.bindparam('uuid'),
        build_plans.c.host == sa.bindparam('on_host'),
        build_plans.c.ended_at.is_(None),
        build_plans.c.started_at.is_(None)).values(started_at=now)
    with engine.begin() as conn:
        result = conn.execute(statement, [{'uuid': uuid, 'on_host': host}
                                          for host, uuid in building])
    return max(result.rowcount, 0)


def started_on(conn: Connection, instance_uuid: str, host: str) -> bool:
    """``host`` said it began the build: True if the build in flight is cast to it (then marked started).

    False for a build moved off ``host``, ended, or gone: that host's word
    changes nothing.
    """
    found = conn.execute(sa.select(build_plans.c.started_at).where(
        build_plans.c.instance_uuid == instance_uuid, build_plans.c.host == host,
        build_plans.c.ended_at.is_(None)).with_for_update()).first()
    if found is None:
        return False
    if found.started_at is None:
        conn.execute(build_plans.update().where(
            build_plans.c.instance_uuid == instance_uuid).values(started_at=utcnow()))
    return True


def owner(conn: Connection, instance_uuid: str) -> Owner | None:
    """Who owns ``instance_uuid`` (the host of the build in flight, or that runs it); None without a plan."""
    row = conn.execute(_OWNER, {'b_instance_uuid': instance_uuid}).first()
    if row is None:
        return None
    return Owner(host=row.host, moving=row.host is None and row.ended_at is None)


def fenced(conn: Connection, instance_uuid: str, reporter: str | None) -> Owner | None:
    """The owner when a build result from ``reporter`` must not be applied, else None.

    It must not when the instance has a plan and ``reporter`` does not own
    it: the build was moved away from that host while it was down (to the
    owner's host, to ERROR, or is being moved: the owner's host is None).
    ``reporter`` None: the reschedule that took the plan (``take``), fenced
    unless the plan is still being moved.
    """
    found = owner(conn, instance_uuid)
    if found is None:
        return None
    if reporter is None:
        return None if found.moving else found
    return found if found.host != reporter else None


def take_reported(conn: Connection, instance_uuid: str, reporter: str) -> bool:
    """Whether ``reporter``'s failure report takes the plan it owns, for its reschedule (as ``take``).

    Of that report and the stalled-build check, one takes the plan: the
    other finds it hostless (being moved) and is fenced.
    """
    now = utcnow()
    return conn.execute(build_plans.update().where(
        build_plans.c.instance_uuid == instance_uuid, build_plans.c.host == reporter,
        build_plans.c.ended_at.is_(None)).values(
            host=None, cast_at=now, updated_at=now)).rowcount == 1


def in_flight(engine: Engine) -> int:
    """How many builds have not ended."""
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(build_plans).where(
            build_plans.c.ended_at.is_(None))).scalar_one()


def stalled(engine: Engine, *, service_down_time: float, build_timeout: float = 0,
            build_start_timeout: float = 0,
            now: datetime.datetime | None = None) -> list[BuildPlan]:
    """The builds in flight that will not end where they are, oldest cast first.

    Those on a host whose compute service has not been heard of for
    ``service_down_time`` (``host_down``); those not started (``started_at``)
    more than ``build_start_timeout`` seconds after their cast, and those
    cast more than ``build_timeout`` seconds ago, whatever their host (0:
    no bound). A build cast less than ``service_down_time`` ago is left
    alone whatever its host (the scheduler saw that host up a moment ago).
    """
    now = naive_utc(now) if now else utcnow()
    liveness = Liveness.at(service_down_time, now)
    down_before = liveness.down_before
    stuck = liveness.down_clause(services.c.last_seen_at, services.c.forced_down)
    if build_start_timeout:
        stuck = sa.or_(stuck, sa.and_(
            build_plans.c.started_at.is_(None),
            build_plans.c.cast_at < now - datetime.timedelta(seconds=build_start_timeout)))
    if build_timeout:
        stuck = sa.or_(stuck, build_plans.c.cast_at
                       < now - datetime.timedelta(seconds=build_timeout))
    # A plan taken and not yet moved on is its reschedule's for the lease.
    stuck = sa.case((build_plans.c.host.is_(None), build_plans.c.cast_at < now
                     - datetime.timedelta(seconds=RESCHEDULE_LEASE_SECONDS)), else_=stuck)
    query = (sa.select(build_plans, services.c.last_seen_at)
             .select_from(build_plans.outerjoin(services, sa.and_(
                 services.c.host == build_plans.c.host,
                 services.c.binary == COMPUTE_BINARY)))
             .where(build_plans.c.ended_at.is_(None),
                    build_plans.c.cast_at < down_before, stuck)
             .order_by(build_plans.c.cast_at))
    with engine.connect() as conn:
        rows = conn.execute(query).mappings().all()
    return [BuildPlan(instance=Instance.from_primitive(r['instance']),
                      request_spec=RequestSpec.from_primitive(r['request_spec']),
                      host_list=[Selection.from_primitive(s) for s in r['host_list']],
                      cast_at=r['cast_at'], started_at=r['started_at'],
                      host_last_seen=r['last_seen_at'],
                      host_down=liveness.is_down(r['last_seen_at']),
                      hostless=r['host'] is None)
            for r in rows]


#: Seconds a reschedule has to name the next host of a plan it took
#: before the stalled-build check takes the plan from it (its taker died):
#: above its worst case (the cell database away for database_retry_timeout,
#: 120 s, and Placement's retry_timeout, 30 s, on each of its few calls).
RESCHEDULE_LEASE_SECONDS = 600


def take(engine: Engine, plan: BuildPlan) -> bool:
    """Whether this caller is the one to move ``plan`` (no one moved or ended it since it was read).

    The plan taken names no host until the reschedule records the
    alternate: from the take on, a report of the host it was taken from
    is fenced (``fenced``), as it will be once the alternate is named. A
    plan left so for ``RESCHEDULE_LEASE_SECONDS`` (its taker died) is
    stalled again (``lease_expired``) and taken again.
    """
    now = utcnow()
    with engine.begin() as conn:
        return conn.execute(build_plans.update().where(
            build_plans.c.instance_uuid == plan.instance.uuid,
            sa.or_(build_plans.c.host == plan.host, build_plans.c.host.is_(None)),
            build_plans.c.ended_at.is_(None),
            build_plans.c.cast_at == plan.cast_at).values(
                host=None, cast_at=now, updated_at=now)).rowcount == 1
