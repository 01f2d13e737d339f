"""Scheduling records in the API DB (``scheduling_records``, ``scheduling_record_instances``).

A record is stored as its JSON body plus the columns it is found by (request
id, project, outcome, time) and one row per instance it scheduled. What a
record says is the scheduler's business (``scheduler/records/``); this
module only stores, finds and purges them.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import scheduling_record_instances, scheduling_records


@dataclasses.dataclass(frozen=True)
class NewRecord:
    """A record to store: its JSON body and the columns it is found by."""

    request_id: str | None
    project_id: str | None
    outcome: str
    body: dict
    created_at: datetime.datetime
    instance_uuids: Sequence[str]


def insert_many(conn: Connection, records: Sequence[NewRecord]) -> None:
    """Store ``records`` and their instances in the caller's transaction: two statements in all."""
    if not records:
        return
    ids = conn.execute(
        scheduling_records.insert().returning(scheduling_records.c.id,
                                              sort_by_parameter_order=True),
        [{'request_id': r.request_id, 'project_id': r.project_id, 'outcome': r.outcome,
          'record': r.body, 'created_at': r.created_at} for r in records]).scalars().all()
    rows = [{'record_id': record_id, 'instance_uuid': u}
            for record_id, r in zip(ids, records, strict=True) for u in dict.fromkeys(r.instance_uuids)]
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
