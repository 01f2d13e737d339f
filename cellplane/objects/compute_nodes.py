"""Compute nodes in a cell DB (``compute_nodes``): upserted by the cell conductor, read with their service's liveness.

A compute agent reports its node every ``[compute] report_interval``; the
row is keyed by the node's UUID (also its Placement resource provider, which
the scheduler matches Placement's candidates against) and refreshed in one
statement, so a report never needs a read first.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Iterable, Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from cellplane.db import reads
from cellplane.db.cell.models import compute_nodes, services
from cellplane.db.columns import utcnow
from cellplane.objects.services import Liveness
from rpc_schemas.compute_node import ComputeNodeRecord

COMPUTE_BINARY = 'cellplane-compute'


class ComputeNodeConflict(Exception):
    """Another node UUID already holds this (host, nodename) in the cell DB."""


def _conflict(node: ComputeNodeRecord) -> ComputeNodeConflict:
    return ComputeNodeConflict(
        f'compute node {node.host}/{node.nodename} reported UUID {node.uuid}, but '
        f'the cell DB has another UUID for that host and node. If the host was '
        f'rebuilt, delete its old compute_nodes row (and its resource provider '
        f'in Placement) first')


_REFRESHED = ('host', 'nodename', 'vcpus', 'memory_mb', 'local_gb',
              'cpu_allocation_ratio', 'ram_allocation_ratio', 'disk_allocation_ratio',
              'availability_zone', 'stats', 'updated_at')


def _upsert(conn, nodes: Sequence[ComputeNodeRecord]) -> None:
    """Insert or refresh ``nodes``: one statement, its rows passed apart so its SQL is cached."""
    now = utcnow()
    rows = [dict(uuid=node.uuid, created_at=now, updated_at=now,
                 host=node.host, nodename=node.nodename, vcpus=node.vcpus,
                 memory_mb=node.memory_mb, local_gb=node.local_gb,
                 cpu_allocation_ratio=node.cpu_allocation_ratio,
                 ram_allocation_ratio=node.ram_allocation_ratio,
                 disk_allocation_ratio=node.disk_allocation_ratio,
                 availability_zone=node.availability_zone, stats=dict(node.stats))
            for node in nodes]
    insert = (postgresql.insert if conn.dialect.name == 'postgresql'
              else sqlite.insert)(compute_nodes)
    conn.execute(insert.on_conflict_do_update(
        index_elements=[compute_nodes.c.uuid],
        set_={column: insert.excluded[column] for column in _REFRESHED}), rows)


def upsert(engine: Engine, node: ComputeNodeRecord) -> None:
    """Insert or refresh the row of ``node``."""
    try:
        with engine.begin() as conn:
            _upsert(conn, [node])
    except sa.exc.IntegrityError as exc:
        raise _conflict(node) from exc


def upsert_many(engine: Engine, nodes: Sequence[ComputeNodeRecord]) -> list[ComputeNodeConflict]:
    """Insert or refresh the rows of ``nodes`` in one statement; the conflicts refused.

    If one node conflicts, the batch is written node by node so that the
    others are still recorded; each refused node's conflict is returned.
    """
    nodes = list({node.uuid: node for node in nodes}.values())
    if not nodes:
        return []
    try:
        with engine.begin() as conn:
            _upsert(conn, nodes)
        return []
    except sa.exc.IntegrityError:
        pass
    refused = []
    for node in nodes:
        try:
            upsert(engine, node)
        except ComputeNodeConflict as exc:
            refused.append(exc)
    return refused


def delete_hosts(engine: Engine, hosts: Iterable[str]) -> int:
    """Delete the compute node rows of ``hosts`` (hosts an agent no longer runs); how many went."""
    hosts = list(hosts)
    if not hosts:
        return 0
    with engine.begin() as conn:
        return conn.execute(sa.delete(compute_nodes).where(
            compute_nodes.c.host.in_(hosts))).rowcount


def get_node(engine: Engine, uuid: str) -> dict | None:
    with engine.connect() as conn:
        row = conn.execute(sa.select(compute_nodes)
                           .where(compute_nodes.c.uuid == uuid)).mappings().first()
    return dict(row) if row else None


def list_all(engine: Engine) -> list[dict]:
    """Every compute node row, by id."""
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(compute_nodes).order_by(compute_nodes.c.id)).mappings().all()]


@dataclasses.dataclass(frozen=True)
class NodeWithService:
    """A compute node row with the liveness of its host's ``cellplane-compute`` service."""

    uuid: str
    host: str
    nodename: str
    availability_zone: str | None
    stats: dict
    last_seen_at: datetime.datetime | None
    disabled: bool
    disabled_reason: str | None
    forced_down: bool = False
    # The node row's stamp as read (None: never stamped).
    updated_at: datetime.datetime | None = None


def _with_service():
    return (sa.select(compute_nodes.c.uuid, compute_nodes.c.host,
                      compute_nodes.c.nodename, compute_nodes.c.availability_zone,
                      compute_nodes.c.stats, services.c.last_seen_at,
                      services.c.disabled, services.c.disabled_reason,
                      services.c.forced_down, compute_nodes.c.updated_at)
            .select_from(compute_nodes.outerjoin(
                services, sa.and_(services.c.host == compute_nodes.c.host,
                                  services.c.binary == COMPUTE_BINARY))))


def _node_with_service(row) -> NodeWithService:
    return NodeWithService(
        uuid=row.uuid, host=row.host, nodename=row.nodename,
        availability_zone=row.availability_zone, stats=dict(row.stats or {}),
        last_seen_at=row.last_seen_at, disabled=bool(row.disabled),
        disabled_reason=row.disabled_reason, forced_down=bool(row.forced_down),
        updated_at=row.updated_at)


def list_with_service(engine: Engine) -> list[NodeWithService]:
    """Every node, ordered by host and nodename, with its compute service's row (or none)."""
    query = _with_service().order_by(compute_nodes.c.host, compute_nodes.c.nodename)
    with reads.connect(engine) as conn:
        rows = conn.execute(query).all()
    return [_node_with_service(row) for row in rows]


# Past this many rows changed since the margin, they are read whole in one
# query instead of named one by one.
_NAMED_AT_MOST = 500
# (A row never stamped is read whole by the query below in any case.)
_STAMPS = sa.select(compute_nodes.c.uuid, compute_nodes.c.updated_at).where(
    compute_nodes.c.updated_at >= sa.bindparam('b_since'))


def changed_with_service(engine: Engine, *, since: datetime.datetime,
                         down: Liveness,
                         known: Mapping[str, datetime.datetime | None] | None = None
                         ) -> tuple[int, list[NodeWithService]]:
    """(how many nodes the cell has, the nodes changed since ``since`` or down), one connection.

    Changed: the node row written at or after ``since`` (or never stamped),
    or its compute service row created then. Down: as ``down`` judges the
    service row (none, forced down, or silent). What neither returns is a
    node read before whose row did not change and whose service is up: a
    reader that keeps what it read before needs only these rows, and the
    count tells it whether a node was deleted meanwhile. The services'
    ``last_seen_at`` moves at every heartbeat and is not a change here; an
    operator's change to a service (disabled, forced down, deleted) raises
    the API database's change stamp instead.

    ``known`` (node uuid -> the ``updated_at`` the reader read last) leaves
    out the rows written since ``since`` whose stamp the reader has
    already: only their uuids and stamps are read first. A reader that
    asks from a margin before its last read (rows stamped a little before
    they committed) so reads again only what did change, not every row
    of the margin (5,000 after the hosts' first reports).
    """
    changed = compute_nodes.c.updated_at >= since
    with reads.connect(engine) as conn:
        count = conn.execute(sa.select(sa.func.count()).select_from(compute_nodes)).scalar_one()
        if known is not None:
            fresh = [uuid for uuid, stamp in conn.execute(_STAMPS, {'b_since': since})
                     if uuid not in known or known[uuid] != stamp]
            if len(fresh) <= _NAMED_AT_MOST:
                changed = compute_nodes.c.uuid.in_(fresh)
        query = _with_service().where(sa.or_(
            changed, compute_nodes.c.updated_at.is_(None),
            services.c.created_at >= since,
            down.down_clause(services.c.last_seen_at, services.c.forced_down)))
        rows = conn.execute(query).all()
    return count, [_node_with_service(row) for row in rows]


def zones(engine: Engine) -> set[str]:
    """The availability zones the nodes of this cell report (``[compute] availability_zone``)."""
    with engine.connect() as conn:
        return set(conn.execute(sa.select(compute_nodes.c.availability_zone).where(
            compute_nodes.c.availability_zone.is_not(None)).distinct()).scalars())


def hosts_with_service(engine: Engine) -> set[str]:
    """The hosts that have both a compute node and a compute service row: registered."""
    with engine.connect() as conn:
        return set(conn.execute(
            sa.select(compute_nodes.c.host).join(
                services, sa.and_(services.c.host == compute_nodes.c.host,
                                  services.c.binary == COMPUTE_BINARY))).scalars())


def node_of(engine: Engine, host: str, nodename: str) -> str | None:
    """The uuid of ``nodename`` on ``host`` (its resource provider's), or None."""
    with engine.connect() as conn:
        return conn.execute(sa.select(compute_nodes.c.uuid).where(
            compute_nodes.c.host == host,
            compute_nodes.c.nodename == nodename)).scalar_one_or_none()
