"""Cell mappings in the API DB (``cell_mappings``): each cell's name, bus and database, for the top level.

A cell mapping names a cell and gives the two things the top level needs to
reach it downward: its transport URL (a RabbitMQ vhost) and its database
connection. Cell services never read these: they are configured with their
own cell's URLs directly.
"""
from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import cell_mappings
from cellplane.objects import change_stamps, host_mappings, instance_mappings


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
        change_stamps.bump(conn)
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


def delete(engine: Engine, name_or_uuid: str, *, force: bool = False) -> None:
    """Delete an empty cell mapping; refuse while hosts or instances map to it.

    ``force`` unmaps the cell's hosts first (their compute services are
    gone, or moved: they are mapped again to whatever cell reads them
    next); instances still refuse it.
    """
    mapping = get(engine, name_or_uuid)
    with engine.begin() as conn:
        cell_id = id_of(conn, mapping.uuid)
        if force:
            host_mappings.delete_in_cell(conn, cell_id)
        hosts = host_mappings.count_in_cell(conn, cell_id)
        instances = instance_mappings.count_in_cell(conn, cell_id)
        if hosts or instances:
            raise CellMappingError(
                f'cell {mapping.name} still has {hosts} host(s) and {instances} '
                f'instance(s) mapped to it; move or delete them first'
                + ('' if instances or force else ' (--force unmaps its hosts)'))
        conn.execute(cell_mappings.delete().where(cell_mappings.c.id == cell_id))
        change_stamps.bump(conn)


# Every boot asks it: built once (see cellplane/objects/instances.py's _APPLY).
_ID_OF = sa.select(cell_mappings.c.id).where(cell_mappings.c.uuid == sa.bindparam('b_uuid'))


def id_of(conn: Connection, cell_uuid: str) -> int:
    """The id other API-DB tables refer to the cell by; LookupError if it is not mapped."""
    cell_id = conn.execute(_ID_OF, {'b_uuid': cell_uuid}).scalar_one_or_none()
    if cell_id is None:
        raise LookupError(f'no cell mapping with uuid {cell_uuid}')
    return cell_id


def uuids_by_id(engine: Engine) -> dict[int, str]:
    """Cell mapping id -> cell uuid, for every cell."""
    with engine.connect() as conn:
        return {row.id: row.uuid for row in conn.execute(
            sa.select(cell_mappings.c.id, cell_mappings.c.uuid))}
