"""Instance mappings in the API DB (``instance_mappings``): which cell each instance is in, if any yet.

An instance is mapped to no cell while it is a build request, and to its
cell once the super conductor placed it. Cells are named here by their
cell mapping's id (``cell_mappings.id_of`` turns a uuid into it).
"""
from __future__ import annotations

import datetime
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db import reads
from cellplane.db.api.models import cell_mappings, instance_mappings
from rpc_schemas.instance import Instance

# Built once: every create writes with it (see cellplane/objects/flavors.py's _BY_ID).
_INSERT = instance_mappings.insert()


def insert(conn: Connection, instance: Instance) -> None:
    """Map ``instance`` to no cell yet."""
    insert_many(conn, [instance])


def insert_many(conn: Connection, instances: Sequence[Instance]) -> None:
    """Map each of ``instances`` to no cell yet, in one INSERT (ids in their order)."""
    conn.execute(_INSERT, [
        {'instance_uuid': instance.uuid, 'cell_id': None, 'project_id': instance.project_id,
         'user_id': instance.user_id} for instance in instances])


# Every boot runs it: built once (see cellplane/objects/instances.py's _APPLY).
_POINT = instance_mappings.update().where(
    instance_mappings.c.instance_uuid.in_(sa.bindparam('b_uuids', expanding=True)))


def point_many_at_cell(conn: Connection, instance_uuids: Sequence[str], cell_id: int) -> None:
    """Map the instances to the cell whose mapping id is ``cell_id``."""
    conn.execute(_POINT, {'b_uuids': list(instance_uuids), 'cell_id': cell_id})


def queue_for_delete(engine: Engine, instance_uuid: str) -> None:
    """Mark the instance as being deleted (its terminate was cast)."""
    with engine.begin() as conn:
        conn.execute(instance_mappings.update().where(
            instance_mappings.c.instance_uuid == instance_uuid).values(
                queued_for_delete=True))


def delete(conn: Connection, instance_uuid: str) -> None:
    conn.execute(instance_mappings.delete().where(
        instance_mappings.c.instance_uuid == instance_uuid))


def cells_of(engine: Engine, instance_uuids: Iterable[str] | None = None
             ) -> list[tuple[str, int | None, bool]]:
    """(instance uuid, cell mapping id or None, queued for delete) in creation order.

    Every instance without ``instance_uuids``.
    """
    query = (sa.select(instance_mappings.c.instance_uuid, instance_mappings.c.cell_id,
                       instance_mappings.c.queued_for_delete)
             .order_by(instance_mappings.c.id))
    if instance_uuids is not None:
        query = query.where(instance_mappings.c.instance_uuid.in_(list(instance_uuids)))
    with engine.connect() as conn:
        return [(row[0], row[1], bool(row[2])) for row in conn.execute(query)]


# Each server action (show, delete, a move) finds its cell with it: built once.
_CELL_UUIDS = (sa.select(instance_mappings.c.instance_uuid, cell_mappings.c.uuid,
                         instance_mappings.c.queued_for_delete)
               .select_from(instance_mappings.outerjoin(
                   cell_mappings, cell_mappings.c.id == instance_mappings.c.cell_id))
               .order_by(instance_mappings.c.id))
_CELL_UUIDS_OF = _CELL_UUIDS.where(
    instance_mappings.c.instance_uuid.in_(sa.bindparam('b_uuids', expanding=True)))


def cell_uuids_of(engine: Engine, instance_uuids: Iterable[str] | None = None
                  ) -> list[tuple[str, str | None, bool]]:
    """``cells_of`` naming each cell by its uuid, in one read: (instance uuid, cell uuid or None, queued for delete)."""
    with reads.connect(engine) as conn:
        rows = (conn.execute(_CELL_UUIDS) if instance_uuids is None else
                conn.execute(_CELL_UUIDS_OF, {'b_uuids': list(instance_uuids)}))
        return [(row[0], row[1], bool(row[2])) for row in rows]


def count_in_cell(conn: Connection, cell_id: int) -> int:
    return conn.execute(sa.select(sa.func.count()).select_from(instance_mappings).where(
        instance_mappings.c.cell_id == cell_id)).scalar_one()


def mapped_at(engine: Engine, instance_uuids: Iterable[str] | None = None, *,
              project_id: str | None = None
              ) -> list[tuple[str, int | None, bool, datetime.datetime | None]]:
    """``cells_of`` with each mapping's ``created_at``: when the API accepted the instance.

    With ``project_id``, only that project's instances.
    """
    query = (sa.select(instance_mappings.c.instance_uuid, instance_mappings.c.cell_id,
                       instance_mappings.c.queued_for_delete, instance_mappings.c.created_at)
             .order_by(instance_mappings.c.id))
    if instance_uuids is not None:
        query = query.where(instance_mappings.c.instance_uuid.in_(list(instance_uuids)))
    if project_id is not None:
        query = query.where(instance_mappings.c.project_id == project_id)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [(uuid, cell_id, bool(queued), at) for uuid, cell_id, queued, at in rows]


def mapped_in_cells(engine: Engine, instance_uuids: Iterable[str] | None = None, *,
                    project_id: str | None = None
                    ) -> list[tuple[str, str | None, bool, datetime.datetime | None]]:
    """``mapped_at`` with each cell named by its uuid (None: no cell yet), in one query."""
    query = (sa.select(instance_mappings.c.instance_uuid, cell_mappings.c.uuid,
                       instance_mappings.c.queued_for_delete, instance_mappings.c.created_at)
             .select_from(instance_mappings.outerjoin(
                 cell_mappings, instance_mappings.c.cell_id == cell_mappings.c.id))
             .order_by(instance_mappings.c.id))
    if instance_uuids is not None:
        query = query.where(instance_mappings.c.instance_uuid.in_(list(instance_uuids)))
    if project_id is not None:
        query = query.where(instance_mappings.c.project_id == project_id)
    with reads.connect(engine) as conn:
        rows = conn.execute(query).all()
    return [(uuid, cell, bool(queued), at) for uuid, cell, queued, at in rows]


def owners_of(engine: Engine, instance_uuids: Iterable[str]) -> dict[str, dict]:
    """Instance uuid -> ``{"project_id", "user_id", "created_at"}`` of its mapping.

    What the API database alone knows of an instance, for a cell that cannot
    be read (the compute API's partial records from 2.69).
    """
    uuids = list(instance_uuids)
    if not uuids:
        return {}
    query = sa.select(instance_mappings.c.instance_uuid, instance_mappings.c.project_id,
                      instance_mappings.c.user_id, instance_mappings.c.created_at).where(
        instance_mappings.c.instance_uuid.in_(uuids))
    with engine.connect() as conn:
        return {row.instance_uuid: {'project_id': row.project_id, 'user_id': row.user_id,
                                    'created_at': row.created_at}
                for row in conn.execute(query)}


def count_of_project(conn: Connection, project_id: str) -> int:
    """The project's instances, as quota counts them: mapped (in a cell or not) and not being deleted."""
    return conn.execute(sa.select(sa.func.count()).select_from(instance_mappings).where(
        instance_mappings.c.project_id == project_id,
        sa.not_(instance_mappings.c.queued_for_delete))).scalar_one()
