"""Scheduling records in the API DB (``scheduling_records``, ``scheduling_record_instances``).

A record is stored as its JSON body plus the columns it is found by (request
id, project, outcome, time) and one row per instance it scheduled. What a
record says is the scheduler's business (``scheduler/records/``); this
module only stores, finds and purges them.
"""
from __future__ import annotations

import datetime
from typing import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import scheduling_record_instances, scheduling_records


def insert(conn: Connection, *, request_id: str | None, project_id: str | None,
           outcome: str, body: dict, created_at: datetime.datetime,
           instance_uuids: Iterable[str]) -> None:
    """One record and its instances, in the caller's transaction."""
    record_id = conn.execute(scheduling_records.insert().values(
        request_id=request_id, project_id=project_id, outcome=outcome, record=body,
        created_at=created_at)).inserted_primary_key[0]
    rows = [{'record_id': record_id, 'instance_uuid': u}
            for u in dict.fromkeys(instance_uuids)]
    if rows:
        conn.execute(scheduling_record_instances.insert(), rows)


def find(engine: Engine, *, request_id: str | None = None,
         instance_uuid: str | None = None, last: int) -> list[dict]:
    """The bodies of the newest ``last`` records matching, newest first."""
    select = sa.select(scheduling_records.c.record)
    if request_id:
        select = select.where(scheduling_records.c.request_id == request_id)
    if instance_uuid:
        select = select.where(scheduling_records.c.id.in_(
            sa.select(scheduling_record_instances.c.record_id).where(
                scheduling_record_instances.c.instance_uuid == instance_uuid)))
    select = select.order_by(scheduling_records.c.id.desc()).limit(last)
    with engine.connect() as conn:
        return list(conn.execute(select).scalars())


def purge(engine: Engine, keep: int) -> int:
    """Delete all but the newest ``keep`` records; how many were deleted."""
    with engine.begin() as conn:
        newest_kept = conn.execute(
            sa.select(scheduling_records.c.id).order_by(scheduling_records.c.id.desc())
            .offset(keep).limit(1)).scalar()
        if newest_kept is None:
            return 0
        # Explicit child delete: the ON DELETE CASCADE needs SQLite's
        # foreign_keys pragma, which a foreign engine might not set.
        conn.execute(scheduling_record_instances.delete().where(
            scheduling_record_instances.c.record_id <= newest_kept))
        return conn.execute(scheduling_records.delete().where(
            scheduling_records.c.id <= newest_kept)).rowcount
