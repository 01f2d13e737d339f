"""Reading and writing cell mappings in the API database.

A cell mapping names a cell and gives the two things the top level needs to
reach it downward: its transport URL (a RabbitMQ vhost) and its database
connection. Cell services never read these: they are configured with their
own cell's URLs directly.
"""
from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db.api.models import cell_mappings, host_mappings, instance_mappings


class CellMappingError(Exception):
    """A cell mapping operation an operator asked for cannot be done."""


@dataclass(frozen=True)
class CellMapping:
    uuid: str
    name: str
    transport_url: str
    database_connection: str
    disabled: bool = False


def _row_to_mapping(row) -> CellMapping:
    return CellMapping(uuid=row.uuid, name=row.name, transport_url=row.transport_url,
                       database_connection=row.database_connection,
                       disabled=bool(row.disabled))


def create(engine: Engine, *, name: str, transport_url: str,
           database_connection: str, uuid: str | None = None) -> CellMapping:
    mapping = CellMapping(uuid=uuid or str(uuidlib.uuid4()), name=name,
                          transport_url=transport_url,
                          database_connection=database_connection)
    with engine.begin() as conn:
        exists = conn.execute(sa.select(cell_mappings.c.uuid).where(
            (cell_mappings.c.name == name) | (cell_mappings.c.uuid == mapping.uuid))).first()
        if exists:
            raise CellMappingError(f'a cell named {name!r} or with uuid {mapping.uuid} exists')
        conn.execute(cell_mappings.insert().values(
            uuid=mapping.uuid, name=name, transport_url=transport_url,
            database_connection=database_connection))
    return mapping


def list_all(engine: Engine) -> list[CellMapping]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(cell_mappings).order_by(cell_mappings.c.name))
        return [_row_to_mapping(r) for r in rows]


def get(engine: Engine, name_or_uuid: str) -> CellMapping:
    with engine.connect() as conn:
        row = conn.execute(sa.select(cell_mappings).where(
            (cell_mappings.c.name == name_or_uuid)
            | (cell_mappings.c.uuid == name_or_uuid))).first()
    if row is None:
        raise CellMappingError(f'no cell named or with uuid {name_or_uuid!r}')
    return _row_to_mapping(row)


def delete(engine: Engine, name_or_uuid: str) -> None:
    """Delete an empty cell mapping; refuse while hosts or instances map to it."""
    mapping = get(engine, name_or_uuid)
    with engine.begin() as conn:
        cell_id = conn.execute(sa.select(cell_mappings.c.id).where(
            cell_mappings.c.uuid == mapping.uuid)).scalar_one()
        hosts = conn.execute(sa.select(sa.func.count()).select_from(host_mappings).where(
            host_mappings.c.cell_id == cell_id)).scalar_one()
        instances = conn.execute(sa.select(sa.func.count()).select_from(instance_mappings).where(
            instance_mappings.c.cell_id == cell_id)).scalar_one()
        if hosts or instances:
            raise CellMappingError(
                f'cell {mapping.name} still has {hosts} host(s) and {instances} '
                f'instance(s) mapped to it; move or delete them first')
        conn.execute(cell_mappings.delete().where(cell_mappings.c.id == cell_id))
