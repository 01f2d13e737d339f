"""The ``database`` record backend: scheduling records in the API database.

Each record is one ``scheduling_records`` row (its JSON and the columns it
is found by) plus one ``scheduling_record_instances`` row per instance, all
written in one transaction per batch. Found by request id or instance UUID
through indexes. Retention: ``purge`` keeps the newest
``[scheduler] records_retention`` records; the writer runs it every
``PURGE_EVERY`` records it writes, and ``cellplane-manage scheduler
purge-records`` runs it on demand.
"""
from __future__ import annotations

import sqlalchemy as sa
from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane.db.api.models import scheduling_record_instances, scheduling_records
from cellplane.db.engines import create_engine
from scheduler.records.backend import RecordBackend, RecordBackendError, RecordQuery
from scheduler.records.record import SchedulingRecord

#: Records written between two automatic purges: the table overshoots the
#: retention by at most this many rows.
PURGE_EVERY = 500


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


class DatabaseBackend(RecordBackend):
    def __init__(self, engine: Engine, *, retention: int, owns_engine: bool = False) -> None:
        self.engine = engine
        self.retention = retention
        self._owns_engine = owns_engine
        self._since_purge = 0

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> 'DatabaseBackend':
        url = conf.api_database.connection
        if not url:
            raise RecordBackendError(
                'record_backend = database needs [api_database] connection')
        return cls(create_engine(url, pool_size=2, max_overflow=2),
                   retention=conf.scheduler.records_retention, owns_engine=True)

    def write(self, records: list[SchedulingRecord]) -> None:
        with self.engine.begin() as conn:
            for record in records:
                record_id = conn.execute(scheduling_records.insert().values(
                    request_id=record.request_id, project_id=record.project_id,
                    outcome=record.outcome, record=record.to_dict(),
                    created_at=record.created_at)).inserted_primary_key[0]
                if record.instance_uuids:
                    conn.execute(scheduling_record_instances.insert(), [
                        {'record_id': record_id, 'instance_uuid': u}
                        for u in dict.fromkeys(record.instance_uuids)])
        self._since_purge += len(records)
        if self._since_purge >= PURGE_EVERY:
            self._since_purge = 0
            purge(self.engine, self.retention)

    def find(self, query: RecordQuery) -> list[SchedulingRecord]:
        select = sa.select(scheduling_records.c.record)
        if query.request_id:
            select = select.where(scheduling_records.c.request_id == query.request_id)
        if query.instance_uuid:
            select = select.where(scheduling_records.c.id.in_(
                sa.select(scheduling_record_instances.c.record_id).where(
                    scheduling_record_instances.c.instance_uuid == query.instance_uuid)))
        select = select.order_by(scheduling_records.c.id.desc()).limit(query.last)
        with self.engine.connect() as conn:
            return [SchedulingRecord.from_dict(body) for body in conn.execute(select).scalars()]

    def close(self) -> None:
        if self._owns_engine:
            self.engine.dispose()
