"""Build requests in the API DB (``build_requests``): an instance asked for and not yet in a cell.

An instance asked for is, until it reaches a cell, a build request (the
``Instance`` payload as asked), a request spec (the ``RequestSpec`` payload)
and an instance mapping with no cell, all written in one transaction by
``record``. The super conductor then either ``place``s it (mapping points at
the cell, build request deleted, in one transaction) or marks the whole
request ``fail``ed with the reason (NoValidHost), which stays visible until
the user deletes it (``discard``). Payloads are stored as their versioned
envelopes, so a stored row names the version it was written with.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db.api.models import build_requests
from cellplane.objects import cell_mappings, instance_mappings, request_specs
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec


class BuildRequestNotFound(Exception):
    """No build request for this instance: it was placed in a cell or deleted."""


@dataclasses.dataclass(frozen=True)
class BuildRequest:
    instance: Instance
    fault_message: str | None
    failed_at: datetime.datetime | None
    created_at: datetime.datetime | None

    @property
    def failed(self) -> bool:
        return self.fault_message is not None


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def record(engine: Engine, instances: Sequence[Instance], spec: RequestSpec) -> None:
    """Write build request, request spec and cell-less mapping of each instance, atomically."""
    with engine.begin() as conn:
        for instance in instances:
            conn.execute(build_requests.insert().values(
                instance_uuid=instance.uuid, project_id=instance.project_id,
                user_id=instance.user_id, instance=instance.to_primitive()))
            request_specs.insert(conn, instance.uuid, spec)
            instance_mappings.insert(conn, instance)


def _from_row(row) -> BuildRequest:
    return BuildRequest(instance=Instance.from_primitive(row.instance),
                        fault_message=row.fault_message, failed_at=row.failed_at,
                        created_at=row.created_at)


def get(engine: Engine, instance_uuid: str) -> BuildRequest:
    with engine.connect() as conn:
        row = conn.execute(sa.select(build_requests).where(
            build_requests.c.instance_uuid == instance_uuid)).first()
    if row is None:
        raise BuildRequestNotFound(f'no build request for instance {instance_uuid}')
    return _from_row(row)


def get_many(engine: Engine, instance_uuids: Iterable[str]) -> dict[str, BuildRequest]:
    """Instance UUID -> build request, for those that still exist."""
    uuids = list(instance_uuids)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(build_requests).where(
            build_requests.c.instance_uuid.in_(uuids))).all()
    return {row.instance_uuid: _from_row(row) for row in rows}


def list_all(engine: Engine) -> list[BuildRequest]:
    """Every instance not in a cell (being scheduled, or failed), oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(sa.select(build_requests).order_by(
            build_requests.c.id)).all()
    return [_from_row(row) for row in rows]


def request_spec(engine: Engine, instance_uuid: str) -> RequestSpec:
    spec = request_specs.get(engine, instance_uuid)
    if spec is None:
        raise BuildRequestNotFound(f'no request spec for instance {instance_uuid}')
    return spec


def place(engine: Engine, instance_uuid: str, cell_uuid: str) -> bool:
    """Point the mapping at the cell and delete the build request, in one transaction.

    False (and nothing changed) if the build request no longer exists: the
    user deleted the instance while it was being scheduled.
    """
    with engine.begin() as conn:
        deleted = conn.execute(build_requests.delete().where(
            build_requests.c.instance_uuid == instance_uuid)).rowcount
        if not deleted:
            return False
        instance_mappings.point_at_cell(conn, instance_uuid,
                                        cell_mappings.id_of(conn, cell_uuid))
    return True


def fail(engine: Engine, instance_uuids: Iterable[str], reason: str) -> int:
    """Mark the build requests failed with ``reason``; how many were marked."""
    with engine.begin() as conn:
        return conn.execute(build_requests.update().where(
            build_requests.c.instance_uuid.in_(list(instance_uuids))).values(
                fault_message=reason, failed_at=_utcnow())).rowcount


def discard(engine: Engine, instance_uuid: str) -> bool:
    """Delete an instance that never reached a cell: build request, spec, mapping.

    False if there was no build request (the instance is in a cell by now).
    """
    with engine.begin() as conn:
        deleted = conn.execute(build_requests.delete().where(
            build_requests.c.instance_uuid == instance_uuid)).rowcount
        if not deleted:
            return False
        request_specs.delete(conn, instance_uuid)
        instance_mappings.delete(conn, instance_uuid)
    return True
