"""``/servers/{id}/os-instance-actions``: a server's actions and their events, as Nova answers at 2.1 to 2.69.

An action (``create``: cellplane records no other yet)::

    {"action": "create", "instance_uuid", "request_id": "req-...", "user_id",
     "project_id", "start_time": "2026-11-26T17:40:01.000000", "message": null,
     "updated_at" (2.58)}

and, shown by its request id, its ``events``: the scheduling, each build
attempt and each refused claim of an alternate, with ``event``,
``start_time``, ``finish_time``, ``result`` (``Success``/``Error``),
``traceback`` (why the attempt failed; for whom ``...:events`` allows),
``hostId`` (2.62) and ``host`` (2.62, for whom ``...:events`` allows).
Events are shown to whom ``...:events`` allows, and from 2.51 to whoever
may see the action. Versions: 2.21 shows a deleted server's actions;
2.58 adds ``updated_at``, ``limit``/``marker`` (a request id) paging with
``links`` and ``changes-since``; 2.66 ``changes-before``. Another
project's server is 404, as in Nova.
"""
from __future__ import annotations

import datetime
import hashlib
from urllib.parse import urlencode

from oslo_utils import timeutils

from cellplane_api import errors, instance_actions, servers
from cellplane_api.policies import instance_actions as rules
from cellplane_api.request import json_response

MAX_LIMIT = 1000
_EPOCH = datetime.datetime(1970, 1, 1)
_QUERY_V258 = ('limit', 'marker', 'changes-since')
_QUERY_V266 = _QUERY_V258 + ('changes-before',)


def _time(value: datetime.datetime | None) -> str | None:
    return value.isoformat(timespec='microseconds') if value is not None else None


def host_id(project_id: str, host: str | None) -> str:
    """Nova's hostId: the host, hashed with the project, so projects cannot compare hosts."""
    if not host:
        return ''
    return hashlib.sha224(f'{project_id}{host}'.encode()).hexdigest()


def _server(req, rule: str) -> servers.Server:
    """The server of the URL if ``rule`` allows the caller it (404 if another project's, else 403)."""
    uuid = req.urlvars['server_id']
    services = req.services
    try:
        server = servers.show(services.api_engine, services.cells, uuid,
                              cell_timeout=services.cell_timeout)
    except servers.ServerNotFound:
        server = None
    if server is not None and server.status == servers.UNKNOWN:
        raise errors.ComputeError(f'Cell {server.cell} is not responding and hence instance '
                                  f'info is not available.')
    # From 2.21 a deleted server's actions are shown, as Nova reads them with read_deleted.
    gone = server is None or (server.status == servers.DELETED and req.mv < (2, 21))
    if gone or not (server.project_id == req.credentials.project_id
                    or req.allowed(rule, {'project_id': server.project_id})):
        raise errors.NotFound(f'Instance {uuid} could not be found.')
    req.authorize(rule, {'project_id': server.project_id})
    return server


def _actions(req, server: servers.Server) -> list[instance_actions.Action]:
    services = req.services
    try:
        return instance_actions.actions_of(services.api_engine, services.cells, server.uuid,
                                           cell_timeout=services.cell_timeout)
    except instance_actions.CellUnreadable as exc:
        raise errors.ComputeError(str(exc)) from None


def _action(req, action: instance_actions.Action) -> dict:
    doc = {'action': action.action, 'instance_uuid': action.instance_uuid,
           'request_id': action.request_id, 'user_id': action.user_id or '',
           'project_id': action.project_id or '',
           'start_time': _time(action.start_time or _EPOCH), 'message': action.message}
    if req.mv >= (2, 58):
        doc['updated_at'] = _time(action.updated_at or action.start_time or _EPOCH)
    return doc


def _event(req, event: instance_actions.Event, project_id: str, *, details: bool) -> dict:
    doc = {'event': event.event, 'start_time': _time(event.start_time or event.finish_time
                                                     or _EPOCH),
           'finish_time': _time(event.finish_time), 'result': event.result}
    if details:
        doc['traceback'] = event.reason
    if req.mv >= (2, 62):
        if details:
            doc['host'] = event.host or ''
        doc['hostId'] = host_id(project_id, event.host)
    return doc


def _parse_time(name: str, value: str) -> datetime.datetime:
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(value))
    except ValueError:
        raise errors.BadRequest(f'Invalid input for query parameters {name}. Value: {value}. '
                                f'It is not an ISO 8601 time.') from None


def _query(req) -> dict:
    """The paging and filters asked (2.58 on; unknown ones refused as Nova's query schema does)."""
    if req.mv < (2, 58):
        return {}
    known = _QUERY_V266 if req.mv >= (2, 66) else _QUERY_V258
    for name in req.GET:
        if name not in known:
            raise errors.BadRequest(f'Invalid input for query parameters {name}. Additional '
                                    f'properties are not allowed ({name!r} was unexpected)')
    asked = {}
    for name in known:
        values = req.GET.getall(name)
        if len(values) > 1:
            raise errors.BadRequest(f'Invalid input for query parameters {name}. Value: '
                                    f'{values}. It must be given once.')
        if values:
            asked[name] = values[0]
    if 'limit' in asked and not asked['limit'].isdigit():
        raise errors.BadRequest(f'Invalid input for query parameters limit. Value: '
                                f'{asked["limit"]}. It is not a whole number >= 0.')
    for name in ('changes-since', 'changes-before'):
        if name in asked:
            asked[name] = _parse_time(name, asked[name])
    if ('changes-since' in asked and 'changes-before' in asked
            and asked['changes-before'] < asked['changes-since']):
        raise errors.BadRequest('The value of changes-since must be less than or equal to '
                                'changes-before.')
    return asked


def _page(found: list[instance_actions.Action], asked: dict) -> list[instance_actions.Action]:
    marker = asked.get('marker')
    if marker is not None:
        at = next((i for i, a in enumerate(found) if a.answers_to(marker)), None)
        if at is None:
            raise errors.BadRequest(f'Marker {marker} could not be found.')
        found = found[at + 1:]
    since, before = asked.get('changes-since'), asked.get('changes-before')
    if since is not None:
        found = [a for a in found if (a.updated_at or _EPOCH) >= since]
    if before is not None:
        found = [a for a in found if (a.updated_at or _EPOCH) <= before]
    return found[:min(MAX_LIMIT, int(asked.get('limit', MAX_LIMIT)))]


def list_instance_actions(req):
    server = _server(req, rules.LIST)
    asked = _query(req)
    page = _page(_actions(req, server), asked)
    body = {'instanceActions': [_action(req, a) for a in page]}
    # As Nova's view builder: a next link when the page is as long as it could be.
    most = min(MAX_LIMIT, int(asked.get('limit', MAX_LIMIT)))
    if req.mv >= (2, 58) and most and len(page) == most:
        query = {k: v for k, v in req.GET.items() if k != 'marker'}
        query['marker'] = page[-1].request_id
        body['links'] = [{'rel': 'next', 'href': f'{req.link_base()}/servers/{server.uuid}/'
                                                 f'os-instance-actions?{urlencode(query)}'}]
    return json_response(body)


def show_instance_action(req):
    server = _server(req, rules.SHOW)
    request_id = req.urlvars['request_id']
    action = next((a for a in _actions(req, server) if a.answers_to(request_id)), None)
    if action is None:
        raise errors.NotFound(f'Action {request_id} not found')
    doc = _action(req, action)
    details = req.allowed(rules.EVENTS, {'project_id': server.project_id})
    if details or req.mv >= (2, 51):
        project_id = action.project_id or server.project_id
        doc['events'] = [_event(req, e, project_id, details=details) for e in action.events]
    return json_response({'instanceAction': doc})
