"""Build requests in the API DB (``build_requests``): an instance asked for and not yet in a cell.

An instance asked for is, until it reaches a cell, a build request (the
``Instance`` payload as asked), a request spec (the ``RequestSpec`` payload)
and an instance mapping with no cell, all written in one transaction by
``record``. The super conductor then either places it (``place_many``:
mapping points at the cell, build request deleted, in one transaction) or marks the whole
request ``fail``ed with the reason (NoValidHost), which stays visible until
the user deletes it (``discard``). Payloads are stored as their versioned
envelopes, so a stored row names the version it was written with.

Leases: a super conductor takes the build requests of a boot
(``lease_and_read``: those no one holds) before it schedules them, and places only what it
still holds. Its boot message is acknowledged when it is received, so a
super conductor that dies mid-boot takes that message with it; what it
leaves behind is found by ``orphans`` (leased by a process whose heartbeat
stopped, or by an earlier process of the same host, or never leased long
after it was asked for: its message was lost before any super conductor
read it) and resumed by whoever wins ``take_over``, a compare-and-set on
the lease that works the same on PostgreSQL and SQLite.

Deleted while held: a user's delete (``discard``) of a request a super
conductor holds cannot simply remove it, for that run may already have
claimed in Placement or written the instance into a cell. The mapping goes
(the server is gone for the user) and the row is marked ``deleted_at``:
hidden from every read here, never leased again, never placed. The holder
sees it when it places (``place_many`` says ``DELETED``), removes what it
made, then the row (``forget_deleted``); if the holder died, the row is an
orphan like any other and whoever resumes it does the same.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Iterable, Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db.api.models import build_requests, request_specs as request_specs_table
from cellplane.db.api.models import services
from cellplane.db.columns import utcnow
from cellplane.objects import (cell_mappings, instance_mappings, request_specs,
                               server_group_places, server_groups)
from cellplane.objects.services import Liveness
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec


class BuildRequestNotFound(Exception):
    """No build request for this instance: it was placed in a cell or deleted."""


class LeaseLost(Exception):
    """Another super conductor took this build request over (this one was taken for dead)."""


@dataclasses.dataclass(frozen=True)
class Lease:
    """Who holds a lease: a super conductor's host and the token of its process."""

    host: str
    token: str


@dataclasses.dataclass(frozen=True)
class Orphan:
    """A build request no live super conductor is placing, and why it is taken for lost."""

    instance_uuid: str
    request_spec: RequestSpec
    # The holder it is taken from; None: it was never leased.
    lease: Lease | None
    why: str


@dataclasses.dataclass(frozen=True)
class BuildRequest:
    instance: Instance
    fault_message: str | None
    failed_at: datetime.datetime | None
    created_at: datetime.datetime | None

    @property
    def failed(self) -> bool:
        return self.fault_message is not None


def record(engine: Engine, instances: Sequence[Instance], spec: RequestSpec) -> None:
    """Write build request, request spec and cell-less mapping of each instance, atomically.

    The instances of a spec with a server group join it in the same
    transaction (``server_groups.add_members``).
    """
    with engine.begin() as conn:
        for instance in instances:
            conn.execute(build_requests.insert().values(
                instance_uuid=instance.uuid, project_id=instance.project_id,
                user_id=instance.user_id, instance=instance.to_primitive()))
            request_specs.insert(conn, instance.uuid, spec)
            instance_mappings.insert(conn, instance)
        if spec.instance_group is not None:
            server_groups.add_members(conn, spec.instance_group.uuid,
                                      [i.uuid for i in instances])


# The rows a user has not deleted (see "Deleted while held" above).
_LIVE = build_requests.c.deleted_at.is_(None)


def _from_row(row) -> BuildRequest:
    return BuildRequest(instance=Instance.from_primitive(row.instance),
                        fault_message=row.fault_message, failed_at=row.failed_at,
                        created_at=row.created_at)


def get(engine: Engine, instance_uuid: str) -> BuildRequest:
    with engine.connect() as conn:
        row = conn.execute(sa.select(build_requests).where(
            build_requests.c.instance_uuid == instance_uuid, _LIVE)).first()
    if row is None:
        raise BuildRequestNotFound(f'no build request for instance {instance_uuid}')
    return _from_row(row)


def get_many(engine: Engine, instance_uuids: Iterable[str]) -> dict[str, BuildRequest]:
    """Instance UUID -> build request, for those that still exist."""
    uuids = list(instance_uuids)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(build_requests).where(
            build_requests.c.instance_uuid.in_(uuids), _LIVE)).all()
    return {row.instance_uuid: _from_row(row) for row in rows}


def list_all(engine: Engine) -> list[BuildRequest]:
    """Every instance not in a cell (being scheduled, or failed), oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(sa.select(build_requests).where(_LIVE).order_by(
            build_requests.c.id)).all()
    return [_from_row(row) for row in rows]


def request_spec(engine: Engine, instance_uuid: str) -> RequestSpec:
    spec = request_specs.get(engine, instance_uuid)
    if spec is None:
        raise BuildRequestNotFound(f'no request spec for instance {instance_uuid}')
    return spec


PLACED, DELETED = 'placed', 'deleted'


def place_many(engine: Engine, cells_by_instance: Mapping[str, str],
               holder: Lease | None = None) -> dict[str, str | LeaseLost]:
    """Point the mappings at their cells and delete the build requests, in one transaction; each one's outcome.

    ``cells_by_instance``: instance uuid -> the uuid of the cell it was
    written into (the instances of one boot are placed together). The outcome of each is ``PLACED`` (mapping points at its
    cell, build request gone), ``DELETED`` (the user deleted it meanwhile;
    nothing changed) or, with ``holder``, a ``LeaseLost`` naming who holds
    it now (nothing changed). A database error changes nothing for any.
    """
    uuids = list(cells_by_instance)
    outcomes: dict[str, str | LeaseLost] = {}
    with engine.begin() as conn:
        placed = set(conn.execute(
            _PLACE if holder is None else _PLACE_HELD,
            {'b_uuids': uuids, 'b_token': holder.token if holder else None}).scalars())
        by_cell: dict[str, list[str]] = {}
        for uuid in uuids:
            if uuid in placed:
                outcomes[uuid] = PLACED
                by_cell.setdefault(cells_by_instance[uuid], []).append(uuid)
            else:
                outcomes[uuid] = DELETED
        if holder is not None and len(placed) < len(uuids):
            for row in conn.execute(sa.select(
                    build_requests.c.instance_uuid, build_requests.c.lease_host).where(
                    build_requests.c.instance_uuid.in_(
                        [u for u in uuids if u not in placed]),
                    build_requests.c.lease_token != holder.token)):
                outcomes[row.instance_uuid] = LeaseLost(
                    f'build request {row.instance_uuid} was taken over by the super '
                    f'conductor on {row.lease_host}')
        for cell_uuid, placed_here in by_cell.items():
            instance_mappings.point_many_at_cell(
                conn, placed_here, cell_mappings.id_of(conn, cell_uuid))
    return outcomes


# The statements of every boot, built once (see cellplane/objects/instances.py's
# _APPLY): building a statement and its cache key costs more CPU than running it.
_UUIDS = sa.bindparam('b_uuids', expanding=True)
_PLACE = build_requests.delete().where(
    build_requests.c.instance_uuid.in_(_UUIDS), _LIVE).returning(
        build_requests.c.instance_uuid)
_PLACE_HELD = build_requests.delete().where(
    build_requests.c.instance_uuid.in_(_UUIDS), _LIVE,
    build_requests.c.lease_token == sa.bindparam('b_token')).returning(
        build_requests.c.instance_uuid)
_LEASE = build_requests.update().where(
    build_requests.c.instance_uuid.in_(_UUIDS), build_requests.c.fault_message.is_(None),
    _LIVE, build_requests.c.lease_token.is_(None)).returning(*build_requests.c)


def fail(engine: Engine, instance_uuids: Iterable[str], reason: str) -> int:
    """Mark the build requests failed with ``reason``; how many were marked.

    A failed member of a server group holds no place in it any more.
    """
    uuids = list(instance_uuids)
    with engine.begin() as conn:
        server_group_places.release_on(conn, uuids)
        return conn.execute(build_requests.update().where(
            build_requests.c.instance_uuid.in_(uuids), _LIVE).values(
                fault_message=reason, failed_at=utcnow())).rowcount


def forget_deleted(engine: Engine, instance_uuids: Iterable[str], holder: Lease) -> list[str]:
    """Remove the requests of these that the user deleted while ``holder`` held them; which went.

    Called once what ``holder``'s run made of them (a claim, an instance
    row in a cell) is undone.
    """
    uuids = list(instance_uuids)
    with engine.begin() as conn:
        gone = list(conn.execute(build_requests.delete().where(
            build_requests.c.instance_uuid.in_(uuids),
            build_requests.c.deleted_at.is_not(None),
            build_requests.c.lease_token == holder.token).returning(
                build_requests.c.instance_uuid)).scalars())
        for uuid in gone:
            request_specs.delete(conn, uuid)
    return gone


def discard(engine: Engine, instance_uuid: str) -> bool:
    """Delete an instance that never reached a cell: build request, spec, mapping.

    False if there was no build request (the instance is in a cell by now).
    A request a super conductor holds is only marked deleted (its mapping
    goes): see "Deleted while held" above.
    """
    with engine.begin() as conn:
        held = build_requests.c.lease_token.is_not(None) & build_requests.c.fault_message.is_(None)
        # Held by a super conductor placing it: hidden now, removed by that
        # run (or its resumer) once its claim and cell row are undone.
        if conn.execute(build_requests.update().where(
                build_requests.c.instance_uuid == instance_uuid, _LIVE, held).values(
                    deleted_at=utcnow())).rowcount:
            instance_mappings.delete(conn, instance_uuid)
            return True
        deleted = conn.execute(build_requests.delete().where(
            build_requests.c.instance_uuid == instance_uuid, _LIVE)).rowcount
        if not deleted:
            return False
        request_specs.delete(conn, instance_uuid)
        instance_mappings.delete(conn, instance_uuid)
    return True


def lease_and_read(engine: Engine, instance_uuids: Sequence[str],
                   holder: Lease) -> dict[str, BuildRequest]:
    """Lease to ``holder`` those of the build requests that exist, have not failed and no one holds; those it got.

    Returns the requests ``holder`` holds now, in the order given: one
    statement, usually. A request another super conductor holds (it resumed
    it while this message waited) is left to that one.
    """
    uuids = list(instance_uuids)
    with engine.begin() as conn:
        got = {row.instance_uuid: row for row in conn.execute(_LEASE, {
            'b_uuids': uuids, 'lease_host': holder.host, 'lease_token': holder.token,
            'leased_at': utcnow()})}
        if len(got) < len(uuids):
            # Those this holder already held (a resumption took them over).
            got.update((row.instance_uuid, row) for row in conn.execute(
                sa.select(build_requests).where(
                    build_requests.c.instance_uuid.in_([u for u in uuids if u not in got]),
                    build_requests.c.fault_message.is_(None), _LIVE,
                    build_requests.c.lease_token == holder.token)))
    return {u: _from_row(got[u]) for u in uuids if u in got}


def orphans(engine: Engine, *, holder: Lease, binary: str, service_down_time: float,
            unleased_for: float, now: datetime.datetime | None = None) -> list[Orphan]:
    """The build requests not failed that no live super conductor is placing, oldest first.

    - leased by an earlier process of ``holder``'s host (it restarted);
    - leased more than ``service_down_time`` ago by a host whose ``binary``
      heartbeat (API DB ``services``) is older than that, or that has none;
    - never leased, and asked for more than ``unleased_for`` seconds ago.
    """
    now = now or utcnow()
    liveness = Liveness.at(service_down_time, now)
    down_before = liveness.down_before
    asked_before = now - datetime.timedelta(seconds=unleased_for)
    holder_seen = (sa.select(services.c.last_seen_at)
                   .where(services.c.host == build_requests.c.lease_host,
                          services.c.binary == binary)
                   .scalar_subquery())
    query = (sa.select(build_requests.c.instance_uuid, build_requests.c.lease_host,
                       build_requests.c.lease_token, build_requests.c.created_at,
                       holder_seen.label('holder_seen'), request_specs_table.c.spec)
             .select_from(build_requests.join(
                 request_specs_table,
                 request_specs_table.c.instance_uuid == build_requests.c.instance_uuid))
             .where(build_requests.c.fault_message.is_(None), sa.or_(
                 sa.and_(build_requests.c.lease_token.is_(None),
                         build_requests.c.created_at < asked_before),
                 sa.and_(build_requests.c.lease_host == holder.host,
                         build_requests.c.lease_token != holder.token),
                 # A lease taken within service_down_time was taken by a
                 # live process, whatever its heartbeat says.
                 sa.and_(build_requests.c.lease_host != holder.host,
                         build_requests.c.leased_at < down_before,
                         liveness.down_clause(holder_seen))))
             .order_by(build_requests.c.id))
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    found = []
    for row in rows:
        if row.lease_token is None:
            taken_from = None
            why = (f'no super conductor picked it up in {unleased_for:g} s (asked for '
                   f'at {row.created_at:%H:%M:%S} UTC; its message was lost)')
        else:
            taken_from = Lease(host=row.lease_host, token=row.lease_token)
            if row.lease_host == holder.host:
                why = (f'the super conductor on {row.lease_host} that was placing it '
                       f'restarted')
            elif row.holder_seen is None:
                why = (f'the super conductor on {row.lease_host} that was placing it '
                       f'has no heartbeat')
            else:
                why = (f'the super conductor on {row.lease_host} that was placing it '
                       f'is down (no heartbeat since {row.holder_seen:%H:%M:%S} UTC)')
        found.append(Orphan(instance_uuid=row.instance_uuid,
                            request_spec=RequestSpec.from_primitive(row.spec),
                            lease=taken_from, why=why))
    return found


def take_over(engine: Engine, orphan: Orphan, holder: Lease) -> bool:
    """Whether ``holder`` now holds ``orphan`` (no one took, placed or failed it since it was found)."""
    held_by = (build_requests.c.lease_token.is_(None) if orphan.lease is None
               else build_requests.c.lease_token == orphan.lease.token)
    with engine.begin() as conn:
        return conn.execute(build_requests.update().where(
            build_requests.c.instance_uuid == orphan.instance_uuid,
            build_requests.c.fault_message.is_(None), held_by).values(
                lease_host=holder.host, lease_token=holder.token,
                leased_at=utcnow())).rowcount == 1


def release(engine: Engine, instance_uuids: Iterable[str], holder: Lease) -> None:
    """Give back ``holder``'s leases on these requests (unleased, they are found again later)."""
    with engine.begin() as conn:
        conn.execute(build_requests.update().where(
            build_requests.c.instance_uuid.in_(list(instance_uuids)),
            build_requests.c.lease_token == holder.token).values(
                lease_host=None, lease_token=None, leased_at=None))
