"""Request specs in the API DB (``request_specs``): what each instance was asked with, as a ``RequestSpec``."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import request_specs
from rpc_schemas.request_spec import RequestSpec


def insert(conn: Connection, instance_uuid: str, spec: RequestSpec) -> None:
    conn.execute(request_specs.insert().values(
        instance_uuid=instance_uuid, spec=spec.to_primitive()))


def get(engine: Engine, instance_uuid: str) -> RequestSpec | None:
    """The instance's request spec, or None if it has none (any more)."""
    with engine.connect() as conn:
        spec = conn.execute(sa.select(request_specs.c.spec).where(
            request_specs.c.instance_uuid == instance_uuid)).scalar_one_or_none()
    return None if spec is None else RequestSpec.from_primitive(spec)


def delete(conn: Connection, instance_uuid: str) -> None:
    conn.execute(request_specs.delete().where(
        request_specs.c.instance_uuid == instance_uuid))
