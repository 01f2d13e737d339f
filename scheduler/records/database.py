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

from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane.db.engines import create_engine
from cellplane.objects import scheduling_records
from scheduler.records.backend import RecordBackend, RecordBackendError, RecordQuery
from scheduler.records.record import SchedulingRecord

#: Records written between two automatic purges: the table overshoots the
#: retention by at most this many rows.
PURGE_EVERY = 500


def purge(engine: Engine, keep: int) -> int:
    """Delete all but the newest ``keep`` records; how many were deleted."""
    return scheduling_records.purge(engine, keep)


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
        return cls(create_engine(
            url, pool_size=1, max_overflow=2,
            pool_options='(fixed: one writer thread; [api_database] does not size it)'),
                   retention=conf.scheduler.records_retention, owns_engine=True)

    def write(self, records: list[SchedulingRecord]) -> None:
        with self.engine.begin() as conn:
            scheduling_records.insert_many(conn, [scheduling_records.NewRecord(
                request_id=record.request_id, project_id=record.project_id,
                outcome=record.outcome, body=record.to_dict(),
                created_at=record.created_at, instance_uuids=record.instance_uuids)
                for record in records])
        self._since_purge += len(records)
        if self._since_purge >= PURGE_EVERY:
            self._since_purge = 0
            purge(self.engine, self.retention)

    def find(self, query: RecordQuery) -> list[SchedulingRecord]:
        return [SchedulingRecord.from_dict(body) for body in scheduling_records.find(
            self.engine, request_id=query.request_id, instance_uuid=query.instance_uuid,
            last=query.last)]

    def close(self) -> None:
        if self._owns_engine:
            self.engine.dispose()
