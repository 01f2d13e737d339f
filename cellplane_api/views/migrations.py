"""Nova's migration documents per microversion: ``GET /os-migrations``' and a server's live migrations'.

An ``/os-migrations`` item (2.1)::

    {"id": 7, "status": "migrating", "instance_uuid", "source_node", "source_compute",
     "dest_node", "dest_compute", "dest_host": null, "old_instance_type_id": 1,
     "new_instance_type_id": 2, "created_at": "2026-11-26T17:40:01.000000",
     "updated_at": "..."}

with ``migration_type`` from 2.23 (and ``links`` to the server's migration
for a live migration in progress) and ``uuid`` from 2.59. A server's live
migration (2.23) has ``server_uuid`` instead of ``instance_uuid``, no flavor
ids, and the copy's ``memory_*_bytes`` and ``disk_*_bytes``; ``uuid`` from
2.59. ``id`` is the migration's row id in its cell. ``status`` is
cellplane's (``cellplane/objects/migrations.py``): a live migration in
progress is ``queued``, ``pre-migrating`` or ``migrating`` where Nova says
``queued``, ``preparing`` or ``running``. ``dest_host`` (Nova: the
destination's IP address) is null: cellplane records no host addresses;
nor does the fake driver measure the copy, so the byte counts are null.
"""
from __future__ import annotations

import datetime

from cellplane.objects import migrations
from cellplane_api.moves import CellMigration
from cellplane_api.views.links import links

# A live migration in these statuses is one Nova lists under its server.
IN_PROGRESS = frozenset({migrations.QUEUED, migrations.PRE_MIGRATING, migrations.MIGRATING})
_EPOCH = datetime.datetime(1970, 1, 1)


def live_in_progress(migration: migrations.Migration) -> bool:
    return (migration.migration_type == migrations.LIVE_MIGRATION
            and migration.status in IN_PROGRESS)


def _time(value: datetime.datetime | None) -> str | None:
    return value.isoformat(timespec='microseconds') if value is not None else None


def listed(req, found: CellMigration, flavor_ids: dict[str, int]) -> dict:
    """One item of ``GET /os-migrations`` at the request's version."""
    m = found.migration
    doc = {'id': m.id, 'status': m.status, 'instance_uuid': m.instance_uuid,
           'source_node': m.source_node, 'source_compute': m.source_host,
           'dest_node': m.dest_node, 'dest_compute': m.dest_host, 'dest_host': None,
           'old_instance_type_id': flavor_ids.get(m.old_flavor.flavorid or ''),
           'new_instance_type_id': flavor_ids.get(m.new_flavor.flavorid or ''),
           'created_at': _time(m.created_at or _EPOCH), 'updated_at': _time(m.updated_at)}
    if req.mv >= (2, 23):
        doc['migration_type'] = m.migration_type
        if live_in_progress(m):
            doc['links'] = links(req, f'servers/{m.instance_uuid}/migrations', str(m.id))
    if req.mv >= (2, 59):
        doc['uuid'] = m.uuid
    return doc


def server_migration(req, migration: migrations.Migration) -> dict:
    """A server's live migration (``/servers/{id}/migrations``) at the request's version."""
    doc = {'created_at': _time(migration.created_at or _EPOCH),
           'dest_compute': migration.dest_host, 'dest_host': None,
           'dest_node': migration.dest_node, 'disk_processed_bytes': None,
           'disk_remaining_bytes': None, 'disk_total_bytes': None, 'id': migration.id,
           'memory_processed_bytes': None, 'memory_remaining_bytes': None,
           'memory_total_bytes': None, 'server_uuid': migration.instance_uuid,
           'source_compute': migration.source_host, 'source_node': migration.source_node,
           'status': migration.status, 'updated_at': _time(migration.updated_at)}
    if req.mv >= (2, 59):
        doc['uuid'] = migration.uuid
    return doc
