"""Build requests in the API DB (``build_requests``): an instance asked for and not yet in a cell.

An instance asked for is, until it reaches a cell, a build request (the
``Instance`` payload as asked), a request spec (the ``RequestSpec`` payload)
and an instance mapping with no cell, all written in one transaction by
``record``. The super conductor then either places it (``place_many``:
mapping points at the cell, build request deleted, in one transaction) or
marks the whole request ``fail``ed with the reason (NoValidHost), which
stays visible until the user deletes it (``discard``). Payloads are stored as their versioned
envelopes, so a stored row names the version it was written with.

Leases: a super conductor places only the requests it holds (``Lease``;
taking, finding lost and giving back leases is
``cellplane/objects/build_request_leases.py``, on this table).

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
from sqlalchemy.engine import Connection, Engine

from cellplane.db import reads
from cellplane.db.api import models
from cellplane.db.api.models import build_requests
from cellplane.db.columns import utcnow
from cellplane.objects import (
    cell_mappings,
    instance_mappings,
    request_specs,
    server_group_places,
    server_groups,
)
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
    if spec.instance_group is None and engine.dialect.name == 'postgresql':
        # One statement there (``record_in``), atomic by itself: run as its own
        # transaction, without the BEGIN and COMMIT round trips.
        with engine.connect() as conn, reads.autocommit(conn):
            record_in(conn, instances, spec)
        return
    with engine.begin() as conn:
        record_in(conn, instances, spec)


# Built once: every create writes with it (see cellplane/objects/flavors.py's _BY_ID).
_INSERT = build_requests.insert()


def record_in(conn: Connection, instances: Sequence[Instance], spec: RequestSpec) -> None:
    """``record`` on the caller's transaction (a create that checks its quota in the same one)."""
    if conn.dialect.name == 'postgresql':
        # The three INSERTs in one statement (two of them in a WITH): one
        # round trip and one execute instead of three, built once per count.
        spec_primitive = spec.to_primitive()
        params = {}
        for i, instance in enumerate(instances):
            params[f'b{i}_uuid'] = instance.uuid
            params[f'b{i}_project'] = instance.project_id
            params[f'b{i}_user'] = instance.user_id
            params[f'b{i}_instance'] = instance.to_primitive()
        params['b_spec'] = spec_primitive     # every instance's spec is the same
        conn.execute(_record_statement(len(instances)), params)
    else:
        # One INSERT of every instance per table (a multi-create of B is 3 statements,
        # not 3 x B, each compiled anew from its own values).
        conn.execute(_INSERT, [
            {'instance_uuid': instance.uuid, 'project_id': instance.project_id,
             'user_id': instance.user_id, 'instance': instance.to_primitive()}
            for instance in instances])
        request_specs.insert_many(conn, [instance.uuid for instance in instances], spec)
        instance_mappings.insert_many(conn, instances)
    if spec.instance_group is not None:
        server_groups.add_members(conn, spec.instance_group.uuid,
                                  [i.uuid for i in instances])


# count -> the statement ``record_in`` runs on PostgreSQL for that many instances,
# kept for the counts creates mostly ask (a larger one is built when asked).
_RECORD_STATEMENTS: dict[int, sa.TextClause] = {}
_RECORD_STATEMENTS_KEPT = 32


def _record_statement(count: int) -> sa.TextClause:
    """The build requests, request specs and cell-less mappings of ``count`` instances, one statement.

    ``WITH b AS (INSERT INTO build_requests ...), s AS (INSERT INTO
    request_specs ...) INSERT INTO instance_mappings ...``: PostgreSQL runs
    every data-modifying WITH whether or not it is referenced; the rows go
    in the order given (mapping ids in the instances' order, as before).
    Written as text with typed parameters: SQLAlchemy does not cache the
    compiled form of a multi-row ``insert().values([...])`` (nor of a WITH
    made of one), and compiling it anew for every create cost more than the
    two statements it saves.
    """
    statement = _RECORD_STATEMENTS.get(count)
    if statement is not None:
        return statement
    rows = range(count)
    sql = (
        f'WITH recorded_build_requests AS (INSERT INTO {build_requests.name} '
        '(instance_uuid, project_id, user_id, instance) VALUES '
        + ', '.join(f'(:b{i}_uuid, :b{i}_project, :b{i}_user, :b{i}_instance)' for i in rows)
        + f'), recorded_request_specs AS (INSERT INTO {models.request_specs.name} '
        '(instance_uuid, spec) VALUES '
        + ', '.join(f'(:b{i}_uuid, :b_spec)' for i in rows)
        + f') INSERT INTO {models.instance_mappings.name} (instance_uuid, project_id, user_id) '
        'VALUES ' + ', '.join(f'(:b{i}_uuid, :b{i}_project, :b{i}_user)' for i in rows))
    statement = sa.text(sql).bindparams(
        *(sa.bindparam(f'b{i}_instance', type_=build_requests.c.instance.type) for i in rows),
        sa.bindparam('b_spec', type_=models.request_specs.c.spec.type))
    if count <= _RECORD_STATEMENTS_KEPT:
        _RECORD_STATEMENTS[count] = statement
    return statement


@dataclasses.dataclass(frozen=True)
class Pending:
    """A build request still being scheduled, as quota counts it."""

    instance_uuid: str
    vcpus: int
    memory_mb: int
    # A super conductor holds it: it may have claimed in Placement already.
    leased: bool
    # What it will claim in Placement (resource class -> amount; the flavor's
    # placement_resources), for quotas that count other classes than VCPU
    # and MEMORY_MB (unified limits' class:DISK_GB, class:CUSTOM_*).
    resources: dict[str, int] = dataclasses.field(default_factory=dict)


def pending_of_project(conn: Connection, project_id: str) -> list[Pending]:
    """The project's build requests being scheduled (neither failed nor deleted)."""
    rows = conn.execute(sa.select(build_requests.c.instance_uuid, build_requests.c.instance,
                                  build_requests.c.lease_token).where(
        build_requests.c.project_id == project_id, LIVE,
        build_requests.c.fault_message.is_(None))).all()
    pending = []
    for row in rows:
        flavor = Instance.from_primitive(row.instance).flavor
        try:
            resources = flavor.placement_resources()
        except ValueError:
            # A flavor's resources:* specs are checked when it is made; one
            # that no longer parses counts for its size, as without specs.
            resources = {rc: n for rc, n in (('VCPU', flavor.vcpus),
                                             ('MEMORY_MB', flavor.memory_mb),
                                             ('DISK_GB', flavor.root_gb)) if n}
        pending.append(Pending(row.instance_uuid, flavor.vcpus, flavor.memory_mb,
                               row.lease_token is not None, resources))
    return pending


# The rows a user has not deleted (see "Deleted while held" above); the
# leases module reads and leases only these too.
LIVE = build_requests.c.deleted_at.is_(None)


def from_row(row) -> BuildRequest:
    return BuildRequest(instance=Instance.from_primitive(row.instance),
                        fault_message=row.fault_message, failed_at=row.failed_at,
                        created_at=row.created_at)


def get(engine: Engine, instance_uuid: str) -> BuildRequest:
    with engine.connect() as conn:
        row = conn.execute(sa.select(build_requests).where(
            build_requests.c.instance_uuid == instance_uuid, LIVE)).first()
    if row is None:
        raise BuildRequestNotFound(f'no build request for instance {instance_uuid}')
    return from_row(row)


def get_many(engine: Engine, instance_uuids: Iterable[str]) -> dict[str, BuildRequest]:
    """Instance UUID -> build request, for those that still exist."""
    uuids = list(instance_uuids)
    if not uuids:
        return {}
    with engine.connect() as conn:
        rows = conn.execute(sa.select(build_requests).where(
            build_requests.c.instance_uuid.in_(uuids), LIVE)).all()
    return {row.instance_uuid: from_row(row) for row in rows}


def waiting_of(engine: Engine, instance_uuids: Iterable[str]) -> set[str]:
    """Those of ``instance_uuids`` whose build request exists and has not failed (one read, nothing decoded)."""
    uuids = list(instance_uuids)
    if not uuids:
        return set()
    with reads.connect(engine) as conn:
        return set(conn.execute(sa.select(build_requests.c.instance_uuid).where(
            build_requests.c.instance_uuid.in_(uuids), LIVE,
            build_requests.c.fault_message.is_(None))).scalars())


def list_all(engine: Engine) -> list[BuildRequest]:
    """Every instance not in a cell (being scheduled, or failed), oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(sa.select(build_requests).where(LIVE).order_by(
            build_requests.c.id)).all()
    return [from_row(row) for row in rows]


def request_spec(engine: Engine, instance_uuid: str) -> RequestSpec:
    spec = request_specs.get(engine, instance_uuid)
    if spec is None:
        raise BuildRequestNotFound(f'no request spec for instance {instance_uuid}')
    return spec


PLACED, DELETED = 'placed', 'deleted'


def place_many(engine: Engine, cells_by_instance: Mapping[str, str],
               holder: Lease | None = None) -> dict[str, str | LeaseLost]:
    """Point the mappings at their cells, delete the build requests: one transaction; each one's outcome.

    ``cells_by_instance``: instance uuid -> the uuid of the cell it was
    written into (the instances of one boot are placed together). The
    outcome of each is ``PLACED`` (mapping points at its cell, build
    request gone), ``DELETED`` (the user deleted it meanwhile;
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
    build_requests.c.instance_uuid.in_(_UUIDS), LIVE).returning(
        build_requests.c.instance_uuid)
_PLACE_HELD = build_requests.delete().where(
    build_requests.c.instance_uuid.in_(_UUIDS), LIVE,
    build_requests.c.lease_token == sa.bindparam('b_token')).returning(
        build_requests.c.instance_uuid)


def fail(engine: Engine, instance_uuids: Iterable[str], reason: str) -> int:
    """Mark the build requests failed with ``reason``; how many were marked.

    A failed member of a server group holds no place in it any more.
    """
    uuids = list(instance_uuids)
    with engine.begin() as conn:
        server_group_places.release_on(conn, uuids)
        return conn.execute(build_requests.update().where(
            build_requests.c.instance_uuid.in_(uuids), LIVE).values(
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
                build_requests.c.instance_uuid == instance_uuid, LIVE, held).values(
                    deleted_at=utcnow())).rowcount:
            instance_mappings.delete(conn, instance_uuid)
            return True
        deleted = conn.execute(build_requests.delete().where(
            build_requests.c.instance_uuid == instance_uuid, LIVE)).rowcount
        if not deleted:
            return False
        request_specs.delete(conn, instance_uuid)
        instance_mappings.delete(conn, instance_uuid)
    return True
