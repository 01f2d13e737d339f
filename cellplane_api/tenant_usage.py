"""What each project's servers used over a period, summed across the cells, as Nova's os-simple-tenant-usage counts it.

A server counts from its launch to its deletion (or the period's end):
its hours in the period, and those hours times its flavor's VCPUs, RAM
and disk. Servers that never launched (still building, or failed to) count
nothing, as in Nova. The cells are read in their mapping order, each's
servers by project then uuid; ``limit`` and ``marker`` (an instance uuid)
page over that order, as Nova's ``_get_instances_all_cells`` does. A cell
that cannot be read within ``cell_timeout`` is left out (logged).
"""
from __future__ import annotations

import dataclasses
import datetime
import logging

from cellplane.cells.databases import CellDatabases
from cellplane.cells.scatter_gather import gather
from cellplane.objects import instances
from rpc_schemas.flavor import Flavor

LOG = logging.getLogger(__name__)
TERMINATED = 'terminated'


class MarkerNotFound(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class ServerUsage:
    instance_id: str
    name: str
    tenant_id: str
    flavor: str
    vcpus: int
    memory_mb: int
    local_gb: int
    hours: float
    started_at: datetime.datetime
    ended_at: datetime.datetime | None
    state: str
    uptime: int


def _hours(launched_at, deleted_at, start, stop) -> float:
    begin = max(launched_at, start)
    end = min(stop, deleted_at) if deleted_at is not None else stop
    return max((end - begin).total_seconds(), 0.0) / 3600.0


def _flavor(stored) -> Flavor | None:
    try:
        return Flavor.from_primitive(stored)
    except Exception:  # noqa: BLE001 - a row another version wrote still counts its hours
        return None


def _usage(row: dict, start, stop, now) -> ServerUsage:
    flavor = _flavor(row['flavor']) or Flavor(name='', vcpus=0, memory_mb=0)
    launched, deleted = row['launched_at'], row['deleted_at']
    return ServerUsage(
        instance_id=row['uuid'], name=row['display_name'] or '', tenant_id=row['project_id'],
        flavor=flavor.name, vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
        local_gb=flavor.root_gb,
        hours=_hours(launched, deleted, start, stop), started_at=launched, ended_at=deleted,
        state=TERMINATED if deleted is not None else row['vm_state'],
        uptime=int(((deleted or now) - launched).total_seconds()))


def server_usages(cells: CellDatabases, start: datetime.datetime, stop: datetime.datetime, *,
                  project_id: str | None = None, limit: int | None = None,
                  marker: str | None = None, cell_timeout: float,
                  now: datetime.datetime) -> list[ServerUsage]:
    """The servers that ran in [``start``, ``stop``) (naive UTC), paged; ``MarkerNotFound``."""
    # Every cell, disabled ones too: their servers ran as well.
    mapped = cells.reload()
    answers = gather({cell.uuid: (lambda uuid=cell.uuid: _read(cells, uuid, start, stop,
                                                                project_id))
                      for cell in mapped}, cell_timeout)
    rows = []
    for cell in mapped:
        answer = answers[cell.uuid]
        if isinstance(answer, BaseException):
            LOG.warning('Usage leaves out cell %s: its database could not be read (%s)',
                        cell.name, answer)
            continue
        rows.extend(answer)
    if marker is not None:
        at = next((i for i, row in enumerate(rows) if row['uuid'] == marker), None)
        if at is None:
            raise MarkerNotFound(f'Marker {marker} could not be found.')
        rows = rows[at + 1:]
    if limit is not None:
        rows = rows[:limit]
    return [_usage(row, start, stop, now) for row in rows]


def _read(cells: CellDatabases, cell_uuid: str, start, stop, project_id) -> list[dict]:
    with cells.engine(cell_uuid).connect() as conn:
        return instances.active_in_window(conn, start, stop, project_id=project_id)


def by_project(usages: list[ServerUsage], start, stop, *, detailed: bool) -> list[dict]:
    """Nova's tenant usage documents: totals per project (and its servers when ``detailed``)."""
    summaries: dict[str, dict] = {}
    for one in usages:
        summary = summaries.get(one.tenant_id)
        if summary is None:
            summary = summaries[one.tenant_id] = {
                'tenant_id': one.tenant_id, 'total_local_gb_usage': 0,
                'total_vcpus_usage': 0, 'total_memory_mb_usage': 0, 'total_hours': 0,
                'start': _iso(start), 'stop': _iso(stop)}
            if detailed:
                summary['server_usages'] = []
        summary['total_local_gb_usage'] += one.local_gb * one.hours
        summary['total_vcpus_usage'] += one.vcpus * one.hours
        summary['total_memory_mb_usage'] += one.memory_mb * one.hours
        summary['total_hours'] += one.hours
        if detailed:
            summary['server_usages'].append(document(one))
    return list(summaries.values())


def document(one: ServerUsage) -> dict:
    return {'instance_id': one.instance_id, 'name': one.name, 'tenant_id': one.tenant_id,
            'flavor': one.flavor, 'vcpus': one.vcpus, 'memory_mb': one.memory_mb,
            'local_gb': one.local_gb, 'hours': one.hours, 'started_at': _iso(one.started_at),
            'ended_at': _iso(one.ended_at) if one.ended_at is not None else None,
            'state': one.state, 'uptime': one.uptime}


def _iso(value: datetime.datetime) -> str:
    # Nova's usage times are naive UTC, shown with microseconds.
    return value.isoformat(timespec='microseconds')
