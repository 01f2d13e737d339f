"""``GET /os-migrations``: every cell's migrations, for admins, as Nova answers at 2.1 to 2.69.

Filters at every version (the last value when one is given twice):
``host`` (from or to it), ``source_compute``, ``status``, ``instance_uuid``,
``migration_type`` and ``hidden`` (no cellplane migration is hidden: a true
``hidden`` lists nothing). Below 2.59 other parameters are ignored, as
Nova's query schema allows them, and the list is cell after cell, oldest
first. From 2.59 the list is newest first (``created_at``, then id, both
descending), paged with ``limit`` (at most 1000) and ``marker`` (a
migration uuid, 400 if no cell has it), with a ``migrations_links`` next
link when a page is full, and filtered by ``changes-since`` (and, from 2.66,
``changes-before``) on ``updated_at``; any other parameter is a 400. A cell
that cannot be read is left out (logged), as in Nova. The documents are
``cellplane_api.views.migrations``'.
"""
from __future__ import annotations

import datetime
from urllib.parse import urlencode

import sqlalchemy as sa
from oslo_utils import strutils, timeutils

from cellplane.objects import flavors
from cellplane_api import errors, migration_lists, moves, servers
from cellplane_api.policies import migrations as rules
from cellplane_api.request import json_response
from cellplane_api.views import migrations as views

MAX_LIMIT = 1000
_EPOCH = datetime.datetime(1970, 1, 1)
_FILTERS = ('hidden', 'host', 'instance_uuid', 'source_compute', 'status', 'migration_type')
_QUERY_V259 = _FILTERS + ('limit', 'marker', 'changes-since')
_QUERY_V266 = _QUERY_V259 + ('changes-before',)
_SINGLE = ('limit', 'marker', 'changes-since', 'changes-before')


def _parse_time(name: str, value: str) -> datetime.datetime:
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(value))
    except ValueError:
        raise errors.BadRequest(f'Invalid input for query parameters {name}. Value: {value}. '
                                f'It is not an ISO 8601 time.') from None


def _query(req) -> dict:
    """The filters and paging asked, checked as Nova's query schemas check them."""
    asked: dict = {}
    if req.mv >= (2, 59):
        known = _QUERY_V266 if req.mv >= (2, 66) else _QUERY_V259
        for name in req.GET:
            if name not in known:
                raise errors.BadRequest(f'Invalid input for query parameters {name}. '
                                        f'Additional properties are not allowed ({name!r} '
                                        f'was unexpected)')
        for name in _SINGLE:
            values = req.GET.getall(name)
            if len(values) > 1:
                raise errors.BadRequest(f'Invalid input for query parameters {name}. Value: '
                                        f'{values}. It must be given once.')
            if values and name in known:
                asked[name] = values[0]
        if 'limit' in asked:
            if not asked['limit'].isdigit():
                raise errors.BadRequest(f'Invalid input for query parameters limit. Value: '
                                        f'{asked["limit"]}. It is not a whole number >= 0.')
            asked['limit'] = int(asked['limit'])
        for name in ('changes-since', 'changes-before'):
            if name in asked:
                asked[name] = _parse_time(name, asked[name])
        if ('changes-since' in asked and 'changes-before' in asked
                and asked['changes-before'] < asked['changes-since']):
            raise errors.BadRequest('The value of changes-since must be less than or equal '
                                    'to changes-before.')
    for name in _FILTERS:
        values = req.GET.getall(name)
        if values:
            asked[name] = values[-1]
    return asked


def _sort_key(found: moves.CellMigration) -> tuple:
    m = found.migration
    return (m.created_at or _EPOCH, m.id or 0, m.uuid)


def _page(req, found: list[moves.CellMigration], asked: dict) -> list[moves.CellMigration]:
    """Newest first, after the marker, changed within the times asked, at most ``limit`` (2.59 on)."""
    found = sorted(found, key=_sort_key, reverse=True)
    marker = asked.get('marker')
    if marker is not None:
        after = next((_sort_key(f) for f in found if f.migration.uuid == marker), None)
        if after is None:
            # Filtered out (Nova pages after it all the same), or nowhere.
            try:
                after = _sort_key(moves.show_migration(req.services.api_engine,
                                                       req.services.cells, marker))
            except (servers.ServerError, sa.exc.SQLAlchemyError):
                raise errors.BadRequest(f'Marker {marker} could not be found.') from None
        found = [f for f in found if _sort_key(f) < after]
    since, before = asked.get('changes-since'), asked.get('changes-before')
    if since is not None:
        found = [f for f in found if f.migration.updated_at is not None
                 and f.migration.updated_at >= since]
    if before is not None:
        found = [f for f in found if f.migration.updated_at is not None
                 and f.migration.updated_at <= before]
    return found[:min(MAX_LIMIT, asked.get('limit', MAX_LIMIT))]


def list_migrations(req):
    req.authorize(rules.INDEX)
    asked = _query(req)
    hidden = asked.get('hidden')
    services = req.services
    if hidden is not None and strutils.bool_from_string(hidden):
        found = []
    else:
        found = migration_lists.gather_migrations(services.cells, migration_lists.Filters(
            instance_uuid=asked.get('instance_uuid'), status=asked.get('status'),
            host=asked.get('host'), source_host=asked.get('source_compute'),
            migration_type=asked.get('migration_type')),
            cell_timeout=services.cell_timeout).found
    if req.mv >= (2, 59):
        found = _page(req, found, asked)
    flavor_ids = flavors.row_ids(services.api_engine, [
        f for m in found for f in (m.migration.old_flavor.flavorid,
                                   m.migration.new_flavor.flavorid) if f])
    body = {'migrations': [views.listed(req, m, flavor_ids) for m in found]}
    most = min(MAX_LIMIT, asked.get('limit', MAX_LIMIT))
    if req.mv >= (2, 59) and most and len(found) == most:
        # As Nova's collection links: the query asked, sorted, with the last uuid as marker.
        query = dict(sorted((k, v) for k, v in req.GET.items() if k != 'marker'))
        query['marker'] = found[-1].migration.uuid
        body['migrations_links'] = [{'rel': 'next', 'href': f'{req.link_base()}/'
                                                            f'os-migrations?{urlencode(query)}'}]
    return json_response(body)
