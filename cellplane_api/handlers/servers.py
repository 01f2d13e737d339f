"""``/servers``: create, list, detail, show, delete, at 2.1, over the API role's ``cellplane_api.servers``.

The same functions the ``cellplane server`` commands run do the work here;
this module only reads the request, asks the policy and writes Nova's
documents. A project sees only its own servers: another project's server
is 404, as in Nova; an admin lists every project's with ``all_tenants``.
Lists are sorted as Nova sorts by default (newest first: ``created_at``
descending, then id descending) and paged with ``limit``/``marker``; with
``changes-since`` deleted servers are listed too. At 2.1 a server whose
cell cannot be read is left out of lists, and showing it is a 500 naming
the cell, as in Nova below 2.69.
"""
from __future__ import annotations

import datetime
import hashlib
import re
from urllib.parse import urlencode

from oslo_utils import timeutils

from cellplane.context import new_context
from cellplane_api import errors, scheduler_hints, servers
from cellplane_api.handlers.flavors import links, visible
from cellplane_api.policies import servers as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import servers as schemas
from cellplane_api.schemas import validate

_VM_STATE = {servers.BUILD: 'building', servers.ACTIVE: 'active', servers.ERROR: 'error',
             servers.DELETED: 'deleted', servers.UNKNOWN: 'unknown'}
# Nova's power states: 0 NOSTATE, 1 RUNNING.
_POWER_STATE = {servers.ACTIVE: 1}
_PROGRESS_STATUSES = (servers.BUILD, servers.ACTIVE)
_EPOCH = datetime.datetime(1970, 1, 1)
MAX_LIMIT = 1000


def _time(value: datetime.datetime | None) -> str:
    return (value or _EPOCH).strftime('%Y-%m-%dT%H:%M:%SZ')


def _host_id(server: servers.Server) -> str:
    if not server.host:
        return ''
    return hashlib.sha224(f'{server.project_id}{server.host}'.encode()).hexdigest()


def _brief(req, server: servers.Server) -> dict:
    return {'id': server.uuid, 'name': server.name or '',
            'links': links(req, 'servers', server.uuid)}


def _detail(req, server: servers.Server, *, admin: bool) -> dict:
    doc = {
        **_brief(req, server), 'status': server.status,
        'tenant_id': server.project_id or '', 'user_id': server.user_id or '',
        'metadata': {}, 'hostId': _host_id(server),
        'image': ({'id': server.image_ref, 'links': [links(req, 'images', server.image_ref)[1]]}
                  if server.image_ref else ''),
        'flavor': ({'id': server.flavor_id, 'links': links(req, 'flavors', server.flavor_id)}
                   if server.flavor_id else {}),
        'created': _time(server.created_at), 'updated': _time(server.updated_at or server.created_at),
        'addresses': {}, 'accessIPv4': '', 'accessIPv6': '', 'OS-DCF:diskConfig': 'MANUAL',
        'OS-EXT-AZ:availability_zone': server.availability_zone or '',
        'config_drive': '', 'key_name': None,
        'OS-SRV-USG:launched_at': (server.launched_at.isoformat(timespec='microseconds')
                                   if server.launched_at else None),
        'OS-SRV-USG:terminated_at': None,
        'OS-EXT-STS:task_state': server.task_state,
        'OS-EXT-STS:vm_state': _VM_STATE.get(server.status, server.status.lower()),
        'OS-EXT-STS:power_state': _POWER_STATE.get(server.status, 0),
        'os-extended-volumes:volumes_attached': [],
    }
    if server.status in _PROGRESS_STATUSES:
        doc['progress'] = 100 if server.status == servers.ACTIVE else 0
    if server.status == servers.ERROR and server.fault:
        message, _, details = server.fault.partition('\n')
        doc['fault'] = {'code': 500, 'created': _time(server.updated_at or server.created_at),
                        'message': message, **({'details': details} if details else {})}
    if admin:
        doc['OS-EXT-SRV-ATTR:host'] = server.host
        doc['OS-EXT-SRV-ATTR:hypervisor_hostname'] = server.node
        doc['OS-EXT-SRV-ATTR:instance_name'] = f'instance-{server.uuid}'
    return doc


def _one(req) -> servers.Server:
    """The server of the URL if the caller's project owns it (or the caller is an admin); else 404."""
    uuid = req.urlvars['server_id']
    services = req.services
    try:
        server = servers.show(services.api_engine, services.cells, uuid,
                              cell_timeout=services.cell_timeout)
    except servers.ServerNotFound:
        server = None
    if server is not None and server.status == servers.UNKNOWN:
        # Below 2.69 Nova has no partial record to show: the cell's failure is the answer.
        raise errors.ComputeError(f'Cell {server.cell} is not responding and hence instance '
                                  f'info is not available.')
    if server is None or server.status == servers.DELETED or not (
            server.project_id == req.credentials.project_id
            or req.allowed(rules.INDEX_ALL_TENANTS)):
        raise errors.NotFound(f'Instance {uuid} could not be found.')
    return server


def show_server(req):
    server = _one(req)
    req.authorize(rules.SHOW, {'project_id': server.project_id})
    admin = req.allowed(rules.EXTENDED_ATTRIBUTES, {'project_id': server.project_id})
    return json_response({'server': _detail(req, server, admin=admin)})


def delete_server(req):
    server = _one(req)
    req.authorize(rules.DELETE, {'project_id': server.project_id})
    services = req.services
    ctxt = new_context(user_id=req.credentials.user_id, project_id=req.credentials.project_id)
    try:
        servers.delete(services.api_engine, services.cells, services.compute_api_for, ctxt,
                       server.uuid)
    except servers.ServerNotFound:
        raise errors.NotFound(f'Instance {server.uuid} could not be found.') from None
    except servers.ServerError as exc:
        raise errors.Conflict(str(exc)) from None
    return empty_response(204)


def _flavor_ref(value) -> str:
    return str(value).rstrip('/').rsplit('/', 1)[-1]


def _hint_texts(hints: dict) -> list[str]:
    texts = []
    for name in ('same_host', 'different_host', 'same_domain', 'different_domain'):
        values = hints.get(name, [])
        for value in [values] if isinstance(values, str) else values:
            texts.append(f'{name}={value}')
    return texts


def create_server(req):
    req.authorize(rules.CREATE)
    body = req.json_body()
    validate(schemas.CREATE, body)
    asked = body['server']
    hints = body.get('os:scheduler_hints', {})
    min_count = int(asked.get('min_count', 1))
    max_count = int(asked.get('max_count', min_count))
    if min_count > max_count:
        raise errors.BadRequest(f'Invalid input for field/attribute min_count: min_count '
                                f'({min_count}) must be <= max_count ({max_count}).')
    if max_count > servers.MAX_COUNT:
        raise errors.BadRequest(f'Invalid input for field/attribute max_count: at most '
                                f'{servers.MAX_COUNT}, not {max_count}.')
    services = req.services
    flavor_id = _flavor_ref(asked['flavorRef'])
    # A private flavor the caller's project has no access to does not exist for it.
    if visible(req, flavor_id) is None:
        raise errors.BadRequest(f'Invalid input for field/attribute flavorRef: flavor '
                                f'{flavor_id} could not be found.')
    caller = req.credentials
    try:
        resolved = scheduler_hints.resolve(services.api_engine, services.cells,
                                           _hint_texts(hints),
                                           cell_timeout=services.cell_timeout)
    except servers.ServerError as exc:
        raise errors.BadRequest(f'Invalid input for field/attribute os:scheduler_hints: '
                                f'{exc}') from None
    ctxt = new_context(user_id=caller.user_id, project_id=caller.project_id)
    try:
        uuids = servers.create(
            services.api_engine, services.conductor, ctxt, name=asked['name'],
            flavor=flavor_id, count=max_count, project_id=caller.project_id,
            user_id=caller.user_id, availability_zone=asked.get('availability_zone'),
            cells=services.cells, group=hints.get('group'), hints=resolved,
            image_ref=asked.get('imageRef') or None, cell_timeout=services.cell_timeout)
    except servers.ServerError as exc:
        message = str(exc)
        field = ('availability_zone' if 'availability zone' in message
                 else 'os:scheduler_hints.group' if 'group' in message else 'server')
        raise errors.BadRequest(f'Invalid input for field/attribute {field}: {message}') from None
    resp = json_response({'server': {'id': uuids[0], 'links': links(req, 'servers', uuids[0]),
                                     'OS-DCF:diskConfig': 'MANUAL',
                                     'security_groups': [{'name': 'default'}]}}, status=202)
    resp.headers['Location'] = f'{req.link_base()}/servers/{uuids[0]}'
    return resp


def _parse_time(name: str, value: str) -> datetime.datetime:
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(value))
    except ValueError:
        raise errors.BadRequest(f'Invalid input for query parameters {name}. Value: {value}. '
                                f'It is not an ISO 8601 time.') from None


def _listed(req, rule_all: str) -> tuple[list[servers.Server], bool]:
    params = req.GET
    admin_all = False
    if params.get('all_tenants') is not None:
        req.authorize(rule_all)
        admin_all = True
    services = req.services
    changes_since = params.get('changes-since')
    found = servers.list_servers(services.api_engine, services.cells,
                                 include_deleted=bool(changes_since),
                                 cell_timeout=services.cell_timeout)
    # Below 2.69 a server of a cell that cannot be read is left out, as Nova
    # does ([api] list_records_by_skipping_down_cells, its default).
    found = [s for s in found if s.status != servers.UNKNOWN]
    project = params.get('project_id') or params.get('tenant_id') if admin_all else None
    if not admin_all:
        project = req.credentials.project_id
    if project:
        found = [s for s in found if s.project_id == project]
    if params.get('name'):
        try:
            pattern = re.compile(params['name'])
        except re.error:
            raise errors.BadRequest(f'Invalid input for query parameters name. Value: '
                                    f'{params["name"]}. It is not a regular expression.') from None
        found = [s for s in found if pattern.search(s.name or '')]
    if params.get('status'):
        wanted = params['status'].upper()
        found = [s for s in found if s.status == wanted]
    if params.get('host') and req.allowed(rules.ALLOW_ALL_FILTERS):
        found = [s for s in found if s.host == params['host']]
    if changes_since:
        # As in Nova, servers deleted since then are listed too (DELETED).
        since = _parse_time('changes-since', changes_since)
        found = [s for s in found if (s.updated_at or s.created_at or _EPOCH) >= since]
    # Newest first; within one second (the timestamps' resolution) the later
    # created first, as Nova's id descending does: listed in creation order,
    # reversed, then a stable sort.
    found.reverse()
    found.sort(key=lambda s: s.created_at or _EPOCH, reverse=True)
    marker = params.get('marker')
    if marker:
        at = next((i for i, s in enumerate(found) if s.uuid == marker), None)
        if at is None:
            raise errors.BadRequest(f'marker [{marker}] not found')
        found = found[at + 1:]
    limit = MAX_LIMIT
    if params.get('limit') is not None:
        try:
            limit = int(params['limit'])
        except ValueError:
            limit = -1
        if limit < 0:
            raise errors.BadRequest(f'Invalid input for query parameters limit. Value: '
                                    f'{params["limit"]}. It is not a whole number >= 0.')
    return found[:min(limit, MAX_LIMIT)], len(found) > min(limit, MAX_LIMIT)


def _page_links(req, kind: str, page: list[servers.Server], more: bool) -> dict:
    if not more or not page:
        return {}
    query = {k: v for k, v in req.GET.items() if k != 'marker'}
    query['marker'] = page[-1].uuid
    return {'servers_links': [{'rel': 'next',
                               'href': f'{req.link_base()}/{kind}?{urlencode(query)}'}]}


def list_servers(req):
    req.authorize(rules.INDEX)
    page, more = _listed(req, rules.INDEX_ALL_TENANTS)
    return json_response({'servers': [_brief(req, s) for s in page],
                          **_page_links(req, 'servers', page, more)})


def list_servers_detail(req):
    req.authorize(rules.DETAIL)
    page, more = _listed(req, rules.DETAIL_ALL_TENANTS)
    admin = req.allowed(rules.EXTENDED_ATTRIBUTES)
    return json_response({'servers': [_detail(req, s, admin=admin) for s in page],
                          **_page_links(req, 'servers/detail', page, more)})
