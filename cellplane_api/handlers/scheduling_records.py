"""``/os-scheduling-records``: the scheduler's records, for admins (cellplane's own extension).

``GET /os-scheduling-records`` lists the newest records in brief, newest
first (``cellplane_api.scheduling_records.summary``), each with a link to
its whole::

    {"scheduling_records": [{"request_id": "req-...", "created_at": "...",
      "project_id": "...", "outcome": "selected" | "no valid host" | "error",
      "error": null, "instance_uuids": [...], "candidate_hosts": 4,
      "selected": [{"instance_uuid": "...", "host": "cell1-host2"}],
      "total_ms": 7.5, "links": [{"rel": "self", "href": ".../os-scheduling-records/req-..."}]}]}

Query: ``limit`` (default 20, at most 1000), ``request_id``, ``instance_uuid``
(the records about one server); anything else is a 400 naming it.
``GET /os-scheduling-records/{request_id}`` shows the newest record of that
request whole, as the scheduler wrote it (request summary, Placement query
and candidates, per instance the filters with the hosts they removed and
why, weighed hosts, claims, selections; outcome, error, stage times):
``{"scheduling_record": {...}}``. The request id is the one a server's
``create`` action carries (``os-instance-actions``), so the two read
together say what the scheduler decided and what the hosts then did.
Available at every microversion; the response does not change with it.
"""
from __future__ import annotations

from cellplane_api import errors
from cellplane_api import scheduling_records as records
from cellplane_api.policies import scheduling_records as rules
from cellplane_api.request import json_response

_QUERY = ('limit', 'request_id', 'instance_uuid')


def _link(req, request_id: str | None) -> list[dict]:
    return [{'rel': 'self', 'href': f'{req.link_base()}/os-scheduling-records/{request_id}'}]


def _asked(req) -> dict:
    asked = {}
    for name in req.GET:
        if name not in _QUERY:
            raise errors.BadRequest(f'Invalid input for query parameters {name}: not one of '
                                    f'{", ".join(_QUERY)}.')
        asked[name] = req.GET[name]
    limit = asked.get('limit', str(records.DEFAULT_LIMIT))
    if not limit.isdigit() or not 1 <= int(limit) <= records.MAX_LIMIT:
        raise errors.BadRequest(f'Invalid input for query parameters limit. Value: {limit}. '
                                f'It is not a whole number from 1 to {records.MAX_LIMIT}.')
    asked['limit'] = int(limit)
    return asked


def list_scheduling_records(req):
    req.authorize(rules.INDEX)
    asked = _asked(req)
    found = records.newest(req.services.api_engine, limit=asked['limit'],
                           request_id=asked.get('request_id'),
                           instance_uuid=asked.get('instance_uuid'))
    return json_response({'scheduling_records': [
        {**records.summary(body), 'links': _link(req, body.get('request_id'))}
        for body in found]})


def show_scheduling_record(req):
    req.authorize(rules.SHOW)
    request_id = req.urlvars['request_id']
    body = records.of_request(req.services.api_engine, request_id)
    if body is None:
        raise errors.NotFound(f'Scheduling record of request {request_id} could not be found.')
    return json_response({'scheduling_record': body})
