"""Request specs in the API DB (``request_specs``): what each instance was asked with, as a ``RequestSpec``."""
from __future__ import annotations

from typing import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db import reads
from cellplane.db.api.models import request_specs
from rpc_schemas.request_spec import RequestSpec

# Built once: every create writes with it (see cellplane/objects/flavors.py's _BY_ID).
_INSERT = request_specs.insert()
# Every move reads its instance's spec with it: built once too.
_SPEC_OF = sa.select(request_specs.c.spec).where(
    request_specs.c.instance_uuid == sa.bindparam('b_instance_uuid'))


def insert(conn: Connection, instance_uuid: str, spec: RequestSpec) -> None:
    insert_many(conn, [instance_uuid], spec)


def insert_many(conn: Connection, instance_uuids: Sequence[str], spec: RequestSpec) -> None:
    """The same request spec for each of ``instance_uuids`` (a multi-create's), in one INSERT."""
    primitive = spec.to_primitive()
    conn.execute(_INSERT, [{'instance_uuid': uuid, 'spec': primitive}
                                          for uuid in instance_uuids])


def get(engine: Engine, instance_uuid: str) -> RequestSpec | None:
    """The instance's request spec, or None if it has none (any more)."""
    with reads.connect(engine) as conn:
        spec = conn.execute(_SPEC_OF, {'b_instance_uuid': instance_uuid}).scalar_one_or_none()
    return None if spec is None else RequestSpec.from_primitive(spec)


def delete(conn: Connection, instance_uuid: str) -> None:
    conn.execute(request_specs.delete().where(
        request_specs.c.instance_uuid == instance_uuid))
