"""``/servers``: create, list, detail, show, delete, at 2.1 to 2.69, over the API role's ``cellplane_api.servers``.

The same functions the ``cellplane server`` commands run do the work here;
this module reads the request, asks the policy and has
``cellplane_api.views.servers`` write Nova's documents at the request's
version. A project sees only its own servers: another project's server
is 404, as in Nova; an admin lists every project's with ``all_tenants``.
Lists are sorted as Nova sorts by default (newest first: ``created_at``
descending, then id descending) and paged with ``limit``/``marker``; with
``changes-since`` (or, from 2.66, ``changes-before``) deleted servers are
listed too. A server whose cell cannot be read is, below 2.69, left out of
lists and a 500 naming the cell to show, as in Nova; from 2.69 it is a
partial record with status UNKNOWN, in lists only when no filter, sort or
paging other than ``all_tenants`` is asked (Nova's rule).
"""
from __future__ import annotations

from urllib.parse import urlencode

from cellplane.objects import request_specs
from cellplane_api import errors, quotas, scheduler_hints, server_lists, servers
from cellplane_api.handlers.flavors import links, visible
from cellplane_api.policies import flavors as flavor_rules
from cellplane_api.policies import servers as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import servers as schemas
from cellplane_api.schemas import validate
from cellplane_api.views import servers as views


def _viewer(req, servers_shown, *, target: dict | None = None) -> views.Viewer:
    """What this caller may see of ``servers_shown``, asked of the policy once."""
    host_status, unknown_only = None, False
    if views.at_least(req, 16):
        if req.allowed(rules.SHOW_HOST_STATUS, target):
            host_status = {}
        elif req.allowed(rules.SHOW_HOST_STATUS_UNKNOWN_ONLY, target):
            host_status, unknown_only = {}, True
        if host_status is not None:
            services = req.services
            host_status = servers.host_statuses(
                services.cells, [s for s in servers_shown if s.status != servers.UNKNOWN],
                service_down_time=services.service_down_time,
                cell_timeout=services.cell_timeout)
    return views.Viewer(
        extended_attributes=req.allowed(rules.EXTENDED_ATTRIBUTES, target),
        is_admin=req.is_admin(),
        extra_specs=(views.at_least(req, 47)
                     and req.allowed(flavor_rules.EXTRA_SPECS_INDEX)),
        host_status=host_status, host_status_unknown_only=unknown_only)


def server_of_url(req) -> servers.Server:
    """The server of the URL the caller may see (else 404): what the server actions act on."""
    return _one(req)


def _one(req, *, partial_ok: bool = False) -> servers.Server:
    """The server of the URL if the caller's project owns it (or the caller is an admin); else 404.

    One whose cell cannot be read is returned (UNKNOWN) when ``partial_ok``;
    otherwise it is Nova's 500 naming the cell.
    """
    uuid = req.urlvars['server_id']
    services = req.services
    try:
        server = servers.show(services.api_engine, services.cells, uuid,
                              cell_timeout=services.cell_timeout)
    except servers.ServerNotFound:
        server = None
    if server is None or server.status == servers.DELETED or not (
            server.project_id == req.credentials.project_id
            or req.allowed(rules.INDEX_ALL_TENANTS)):
        raise errors.NotFound(f'Instance {uuid} could not be found.')
    if server.status == servers.UNKNOWN and not partial_ok:
        raise errors.ComputeError(f'Cell {server.cell} is not responding and hence instance '
                                  f'info is not available.')
    return server


def show_server(req):
    server = _one(req, partial_ok=views.at_least(req, 69))
    target = {'project_id': server.project_id}
    req.authorize(rules.SHOW, target)
    viewer = _viewer(req, [server], target=target)
    if server.status == servers.UNKNOWN:
        # From 2.69, what the API database knows, its request spec included.
        spec = request_specs.get(req.services.api_engine, server.uuid)
        return json_response({'server': views.partial(req, server, spec=spec, viewer=viewer)})
    return json_response({'server': views.detail(req, server, viewer)})


def delete_server(req):
    server = _one(req)
    req.authorize(rules.DELETE, {'project_id': server.project_id})
    services = req.services
    ctxt = req.work_context()
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
    validate(schemas.for_version(req.mv.minor), body)
    asked = body['server']
    # Below 2.19 Nova's description is the name asked.
    description = asked.get('description') if views.at_least(req, 19) else asked['name']
    networks = asked.get('networks')
    # As Nova: os:scheduler_hints, else its legacy name.
    hints = body.get('os:scheduler_hints', body.get('OS-SCH-HNT:scheduler_hints', {}))
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
    flavor = visible(req, flavor_id)
    if flavor is None:
        raise errors.BadRequest(f'Invalid input for field/attribute flavorRef: flavor '
                                f'{flavor_id} could not be found.')
    image_ref, image_properties = _image(services, _boot_image(asked))
    caller = req.credentials
    try:
        resolved = scheduler_hints.resolve(services.api_engine, services.cells,
                                           _hint_texts(hints),
                                           cell_timeout=services.cell_timeout)
    except servers.ServerError as exc:
        raise errors.BadRequest(f'Invalid input for field/attribute os:scheduler_hints: '
                                f'{exc}') from None
    ctxt = req.work_context()
    try:
        uuids = servers.create(
            services.api_engine, services.conductor, ctxt, name=asked['name'],
            flavor=flavor, count=max_count, project_id=caller.project_id,
            user_id=caller.user_id, availability_zone=asked.get('availability_zone'),
            cells=services.cells, group=hints.get('group'), hints=resolved,
            image_ref=image_ref, image_properties=image_properties,
            description=description,
            requested_networks=networks if isinstance(networks, str) else None,
            quotas=services.quotas, min_count=min_count, default_zone=services.default_zone,
            cell_timeout=services.cell_timeout)
    except quotas.QuotaExceeded as exc:
        # Nova's HTTPForbidden: a 403 whose body key is "forbidden" (its
        # Fault names only 413 and 429 "overLimit").
        raise errors.Forbidden(str(exc)) from None
    except servers.ServerError as exc:
        message = str(exc)
        field = ('availability_zone' if 'availability zone' in message
                 else 'os:scheduler_hints.group' if 'group' in message else 'server')
        raise errors.BadRequest(f'Invalid input for field/attribute {field}: {message}') from None
    resp = json_response({'server': {'id': uuids[0], 'links': links(req, 'servers', uuids[0]),
                                     'OS-DCF:diskConfig': 'MANUAL',
                                     'security_groups': asked.get(
                                         'security_groups', [{'name': 'default'}])}},
                         status=202)
    resp.headers['Location'] = f'{req.link_base()}/servers/{uuids[0]}'
    return resp


def _boot_image(asked: dict) -> str | None:
    """The image the server boots: ``imageRef``, or the image of its one block device.

    The only block device accepted is the image's local root disk (source
    ``image``, destination ``local``, boot index 0), what python-openstackclient
    sends beside ``imageRef``; volumes need a volume service cellplane has not.
    """
    image_ref = asked.get('imageRef') or None
    for bdm in asked.get('block_device_mapping_v2', ()):
        local_image = (bdm.get('source_type') == 'image'
                       and bdm.get('destination_type', 'local') == 'local'
                       and str(bdm.get('boot_index')) == '0'
                       and isinstance(bdm.get('uuid'), str)
                       and image_ref in (None, bdm['uuid']))
        if not local_image or len(asked['block_device_mapping_v2']) > 1:
            raise errors.BadRequest(
                'Invalid input for field/attribute block_device_mapping_v2: only the '
                'image\'s local root disk (source_type image, destination_type local, '
                'boot_index 0, uuid the imageRef) is supported: there is no volume service.')
        image_ref = bdm['uuid']
    return image_ref


def _image(services, image_ref: str | None) -> tuple[str | None, dict[str, str]]:
    """The imageRef to store and the image's properties for the scheduler.

    With no image catalog configured the imageRef is stored as given; with
    one, it must name an image of the catalog (Nova's 400 otherwise).
    """
    catalog = services.images
    if image_ref is None or catalog is None or not catalog.configured:
        return image_ref, {}
    image = catalog.get(image_ref)
    if image is None:
        raise errors.BadRequest(f'Invalid input for field/attribute imageRef: image '
                                f'{image_ref} could not be found.')
    return image.id, dict(image.properties)


def _page_links(req, kind: str, page: list[servers.Server], more: bool) -> dict:
    if not more or not page:
        return {}
    query = {k: v for k, v in req.GET.items() if k != 'marker'}
    query['marker'] = page[-1].uuid
    return {'servers_links': [{'rel': 'next',
                               'href': f'{req.link_base()}/{kind}?{urlencode(query)}'}]}


def list_servers(req):
    req.authorize(rules.INDEX)
    page, more = server_lists.listed(req, rules.INDEX_ALL_TENANTS)
    return json_response({'servers': [views.brief(req, s) for s in page],
                          **_page_links(req, 'servers', page, more)})


def list_servers_detail(req):
    req.authorize(rules.DETAIL)
    page, more = server_lists.listed(req, rules.DETAIL_ALL_TENANTS)
    viewer = _viewer(req, page)
    return json_response({'servers': views.details(req, page, viewer),
                          **_page_links(req, 'servers/detail', page, more)})
