"""Host mappings in the API DB (``host_mappings``): which cell each compute host belongs to.

Written by the top level, which reads every cell (the scheduler maps the
hosts its refresh finds; ``cellplane-manage cell discover-hosts`` does the
same on demand), never by a cell service. Cells are named by their cell
mapping's id (``cell_mappings.id_of``).
"""
from __future__ import annotations

from typing import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import cell_mappings, host_mappings


def is_mapped(conn: Connection, host: str) -> bool:
    return conn.execute(sa.select(host_mappings.c.id).where(
        host_mappings.c.host == host)).first() is not None


def count_in_cell(conn: Connection, cell_id: int) -> int:
    return conn.execute(sa.select(sa.func.count()).select_from(host_mappings).where(
        host_mappings.c.cell_id == cell_id)).scalar_one()


def map_hosts(conn: Connection, cell_id: int, hosts: Iterable[str]) -> list[str]:
    """Map those of ``hosts`` not mapped yet to the cell; the ones it mapped, sorted.

    A host already mapped (to this cell or another) is left as it is.
    """
    wanted = set(hosts)
    if not wanted:
        return []
    known = set(conn.execute(sa.select(host_mappings.c.host).where(
        host_mappings.c.host.in_(sorted(wanted)))).scalars())
    new = sorted(wanted - known)
    if new:
        conn.execute(host_mappings.insert(), [{'host': h, 'cell_id': cell_id} for h in new])
    return new


def list_all(engine: Engine) -> list[tuple[str, int]]:
    """(host, cell mapping id) of every mapped host, by host."""
    with engine.connect() as conn:
        return [(row.host, row.cell_id) for row in conn.execute(
            sa.select(host_mappings.c.host, host_mappings.c.cell_id)
            .order_by(host_mappings.c.host))]


def unmap(conn: Connection, host: str) -> bool:
    """Unmap one host (its compute service was deleted); whether it was mapped."""
    return bool(conn.execute(host_mappings.delete().where(
        host_mappings.c.host == host)).rowcount)


def hosts_in_cell(engine: Engine, cell_uuid: str) -> list[str]:
    """Every host mapped to the cell ``cell_uuid``, sorted (none for an unknown cell)."""
    with engine.connect() as conn:
        return list(conn.execute(
            sa.select(host_mappings.c.host)
            .join(cell_mappings, cell_mappings.c.id == host_mappings.c.cell_id)
            .where(cell_mappings.c.uuid == cell_uuid)
            .order_by(host_mappings.c.host)).scalars())


def delete_in_cell(conn: Connection, cell_id: int) -> int:
    """Unmap every host of the cell; how many were unmapped."""
    return conn.execute(host_mappings.delete().where(
        host_mappings.c.cell_id == cell_id)).rowcount
