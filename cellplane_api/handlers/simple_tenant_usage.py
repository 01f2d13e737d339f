"""``/os-simple-tenant-usage`` (every project's, admin) and ``.../{tenant_id}`` (one project's), as Nova answers them.

``start`` and ``end`` (``YYYY-MM-DDTHH:MM:SS[.ffffff]`` or ``YYYY-MM-DD
HH:MM:SS.ffffff``, UTC; each defaults to now, and an end in the future is
now) bound the period; ``detailed=1`` (or a true word, which openstacksdk
sends) adds each project's servers to the list. From 2.40 ``limit`` and ``marker`` page over the servers, with
``tenant_usages_links`` (``tenant_usage_links`` when shown) when a page is
full::

    {"tenant_usages": [{"tenant_id": "p1", "start": "2026-11-01T00:00:00.000000",
                        "stop": "2026-11-02T00:00:00.000000", "total_hours": 24.0,
                        "total_vcpus_usage": 48.0, "total_memory_mb_usage": 12288.0,
                        "total_local_gb_usage": 24.0,
                        "server_usages": [{"instance_id": "...", "name": "web",
                                           "tenant_id": "p1", "flavor": "small",
                                           "vcpus": 2, "memory_mb": 512, "local_gb": 1,
                                           "hours": 24.0,
                                           "started_at": "2026-10-30T09:00:00.000000",
                                           "ended_at": null, "state": "active",
                                           "uptime": 200000}]}]}

A project with nothing in the period is shown as ``{"tenant_usage": {}}``.
How usage is counted: ``cellplane_api/tenant_usage.py``.
"""
from __future__ import annotations

import datetime
from urllib.parse import urlencode

from oslo_utils import strutils, timeutils

from cellplane_api import errors, tenant_usage
from cellplane_api.policies import simple_tenant_usage as rules
from cellplane_api.request import json_response

COLLECTION = 'os-simple-tenant-usage'
MAX_LIMIT = 1000
_FORMATS = ('%Y-%m-%dT%H:%M:%S', '%Y-%m-%dT%H:%M:%S.%f', '%Y-%m-%d %H:%M:%S.%f')


def _time(value: str | None, now: datetime.datetime) -> datetime.datetime:
    if not value:
        return now
    for fmt in _FORMATS:
        try:
            return datetime.datetime.strptime(value, fmt)
        except ValueError:
            continue
    raise errors.BadRequest('Invalid datetime string: Datetime is in invalid format')


def _period(req, now: datetime.datetime) -> tuple[datetime.datetime, datetime.datetime]:
    start = _time(req.GET.get('start'), now)
    stop = _time(req.GET.get('end'), now)
    # Nova reads the two "now"s one after the other: with neither given, start < stop.
    if not start < stop and not (req.GET.get('start') is None and req.GET.get('end') is None):
        raise errors.BadRequest('Invalid start time. The start time cannot occur after the '
                                'end time.')
    return start, min(stop, now)


def _paging(req) -> tuple[int, str | None, bool]:
    """(limit, marker, whether links are given): Nova's get_limit_and_marker from 2.40."""
    if req.mv < (2, 40):
        return MAX_LIMIT, None, False
    limit = MAX_LIMIT
    if req.GET.get('limit') is not None:
        value = req.GET['limit']
        if not value.isdigit():
            raise errors.BadRequest(f'Invalid input for query parameters limit. Value: '
                                    f'{value}. It is not a whole number >= 0.')
        limit = min(int(value), MAX_LIMIT)
    return limit, req.GET.get('marker'), True


def _usages(req, project_id: str | None) -> tuple[datetime.datetime, datetime.datetime,
                                                   list[tenant_usage.ServerUsage], int, bool]:
    now = timeutils.utcnow()
    start, stop = _period(req, now)
    limit, marker, links = _paging(req)
    try:
        found = tenant_usage.server_usages(
            req.services.cells, start, stop, project_id=project_id, limit=limit,
            marker=marker, cell_timeout=req.services.cell_timeout, now=now)
    except tenant_usage.MarkerNotFound as exc:
        raise errors.BadRequest(str(exc)) from None
    return start, stop, found, limit, links


def _links(req, collection: str, found: list[tenant_usage.ServerUsage], limit: int) -> list:
    """Nova's next link: given when the page is full, its last server the marker."""
    if not found or len(found) != limit:
        return []
    query = {k: v for k, v in req.GET.items() if k != 'marker'}
    query['marker'] = found[-1].instance_id
    return [{'rel': 'next', 'href': f'{req.link_base()}/{collection}?{urlencode(query)}'}]


def list_tenant_usages(req):
    req.authorize(rules.LIST)
    start, stop, found, limit, links = _usages(req, None)
    # Nova reads only "1"; openstacksdk (so `openstack usage list`) sends "True".
    detailed = strutils.bool_from_string(req.GET.get('detailed', '0'))
    body = {'tenant_usages': tenant_usage.by_project(found, start, stop, detailed=detailed)}
    if links and (next_link := _links(req, COLLECTION, found, limit)):
        body['tenant_usages_links'] = next_link
    return json_response(body)


def show_tenant_usage(req):
    project_id = req.urlvars['tenant_id']
    req.authorize(rules.SHOW, {'project_id': project_id})
    start, stop, found, limit, links = _usages(req, project_id)
    shown = tenant_usage.by_project(found, start, stop, detailed=True)
    body = {'tenant_usage': shown[0] if shown else {}}
    if links and (next_link := _links(req, f'{COLLECTION}/{project_id}', found, limit)):
        body['tenant_usage_links'] = next_link
    return json_response(body)
