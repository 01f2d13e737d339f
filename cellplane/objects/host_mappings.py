"""Host mappings in the API DB (``host_mappings``): which cell each compute host belongs to."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cellplane.db.api.models import host_mappings


def count_in_cell(conn: Connection, cell_id: int) -> int:
    return conn.execute(sa.select(sa.func.count()).select_from(host_mappings).where(
        host_mappings.c.cell_id == cell_id)).scalar_one()
