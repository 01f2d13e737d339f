"""The cell DB's ``compute_nodes`` as the cell conductor keeps them: one row per node, upserted.

A compute agent reports its node every ``[compute] report_interval``; the
row is keyed by the node's UUID (also its Placement resource provider, which
the scheduler matches Placement's candidates against) and refreshed in one
statement, so a report never needs a read first.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from cellplane.db.cell.models import compute_nodes
from conductor.cell_actions import utcnow
from rpc_schemas.compute_node import ComputeNodeRecord


class ComputeNodeConflict(Exception):
    """Another node UUID already holds this (host, nodename) in the cell DB."""


def upsert(engine: Engine, node: ComputeNodeRecord) -> None:
    """Insert or refresh the row of ``node``."""
    now = utcnow()
    insert = (postgresql.insert if engine.dialect.name == 'postgresql'
              else sqlite.insert)(compute_nodes)
    values = dict(
        host=node.host, nodename=node.nodename, vcpus=node.vcpus,
        memory_mb=node.memory_mb, local_gb=node.local_gb,
        cpu_allocation_ratio=node.cpu_allocation_ratio,
        ram_allocation_ratio=node.ram_allocation_ratio,
        disk_allocation_ratio=node.disk_allocation_ratio,
        availability_zone=node.availability_zone, stats=dict(node.stats),
        updated_at=now)
    stmt = insert.values(uuid=node.uuid, created_at=now, **values).on_conflict_do_update(
        index_elements=[compute_nodes.c.uuid], set_=values)
    try:
        with engine.begin() as conn:
            conn.execute(stmt)
    except sa.exc.IntegrityError as exc:
        raise ComputeNodeConflict(
            f'compute node {node.host}/{node.nodename} reported UUID {node.uuid}, but '
            f'the cell DB has another UUID for that host and node. If the host was '
            f'rebuilt, delete its old compute_nodes row (and its resource provider '
            f'in Placement) first') from exc


def get_node(engine: Engine, uuid: str) -> dict | None:
    with engine.connect() as conn:
        row = conn.execute(sa.select(compute_nodes)
                           .where(compute_nodes.c.uuid == uuid)).mappings().first()
    return dict(row) if row else None
