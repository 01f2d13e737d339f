"""Scheduling records as the compute API shows them: the newest N in brief, one request's whole.

The records are those the scheduler keeps in the API database
(``[scheduler] record_backend = database``, the default;
``cellplane.objects.scheduling_records``). A scheduler writing them to a
JSON lines file instead leaves the API none to show (``cellplane scheduler
records`` reads that file where the scheduler runs). A record's whole body
is the scheduler's (``scheduler/records/record.py``); ``summary`` is the
line a list shows of it::

    {"request_id": "req-...", "created_at": "2026-11-26T17:40:01.123456",
     "project_id": "p1", "outcome": "selected", "error": null,
     "instance_uuids": ["..."], "candidate_hosts": 4,
     "selected": [{"instance_uuid": "...", "host": "cell1-host2"}], "total_ms": 7.5}
"""
from __future__ import annotations

from sqlalchemy.engine import Engine

from cellplane.objects import scheduling_records

DEFAULT_LIMIT = 20
MAX_LIMIT = 1000


def summary(body: dict) -> dict:
    """The brief form of a stored record (fields missing from an older record are null)."""
    placement = body.get('placement') or {}
    return {
        'request_id': body.get('request_id'),
        'created_at': body.get('created_at'),
        'project_id': body.get('project_id'),
        'outcome': body.get('outcome'),
        'error': body.get('error'),
        'instance_uuids': list(body.get('instance_uuids') or ()),
        'candidate_hosts': placement.get('candidate_hosts'),
        'selected': [{'instance_uuid': i.get('instance_uuid'), 'host': s.get('host')}
                     for i in body.get('instances') or () for s in i.get('selections') or ()
                     if s.get('claimed')],
        'total_ms': round(sum((body.get('stage_ms') or {}).values()), 3),
    }


def newest(api_engine: Engine, *, limit: int = DEFAULT_LIMIT, request_id: str | None = None,
           instance_uuid: str | None = None) -> list[dict]:
    """The newest ``limit`` records (of a request, or about an instance), newest first, whole."""
    return scheduling_records.find(api_engine, request_id=request_id,
                                   instance_uuid=instance_uuid, last=limit)


def of_request(api_engine: Engine, request_id: str) -> dict | None:
    """The newest record of ``request_id`` (a request asked of the scheduler twice has two), whole."""
    found = scheduling_records.find(api_engine, request_id=request_id, last=1)
    return found[0] if found else None
