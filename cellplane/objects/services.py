"""Services in a cell DB (``services``): one row per (host, binary), written by heartbeats.

A heartbeat creates the row the first time and afterwards bumps
``report_count`` and ``last_seen_at``. ``last_seen_at`` is the conductor's
clock (UTC), not the sender's: liveness is then judged on one clock, whatever
the skew between hosts. The ``disabled`` flag is taken from a heartbeat only
when the row is created; after that an operator's change in the DB wins.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from cellplane.db.cell.models import services
from cellplane.db.columns import utcnow
from rpc_schemas.service_status import ServiceStatus


def record_heartbeat(engine: Engine, status: ServiceStatus) -> None:
    """Insert or refresh the service row of ``status`` in one statement."""
    now = utcnow()
    insert = (postgresql.insert if engine.dialect.name == 'postgresql'
              else sqlite.insert)(services)
    stmt = insert.values(
        host=status.host, binary=status.binary, topic=status.topic,
        report_count=1, last_seen_at=now, disabled=status.disabled,
        disabled_reason=status.disabled_reason, version=status.version,
        created_at=now, updated_at=now,
    ).on_conflict_do_update(
        index_elements=[services.c.host, services.c.binary],
        set_={
            'topic': status.topic,
            'version': status.version,
            'report_count': services.c.report_count + 1,
            'last_seen_at': now,
            'updated_at': now,
        })
    with engine.begin() as conn:
        conn.execute(stmt)


def get_service(engine: Engine, host: str, binary: str) -> dict | None:
    """The row of (host, binary) as a dict, or None."""
    with engine.connect() as conn:
        row = conn.execute(
            sa.select(services).where(services.c.host == host,
                                      services.c.binary == binary)).mappings().first()
    return dict(row) if row else None
