"""``/flavors``: list, detail, show, create, update (2.55), delete, and ``os-extra_specs``.

A flavor document at 2.1::

    {"id": "small", "name": "small", "ram": 512, "disk": 10, "vcpus": 1,
     "OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": false,
     "os-flavor-access:is_public": true, "swap": "", "rxtx_factor": 1.0,
     "links": [{"rel": "self", ...}, {"rel": "bookmark", ...}]}

From 2.55 every flavor document (the list's too) has ``description``, and
``PUT /flavors/{id}`` changes it; from 2.61 the detailed ones have
``extra_specs`` for callers the extra-specs index rule allows (as Nova).
Lists take ``minRam``, ``minDisk``, ``sort_key``/``sort_dir`` (by
``flavorid`` ascending unless asked) and ``limit``/``marker`` with
``flavors_links``.

cellplane's flavors have no ephemeral disk, swap or RX/TX factor: a create
asking for other values is refused naming the field. A private flavor
(``os-flavor-access:is_public: false``) is listed, shown and booted only by
admins and the projects ``os-flavor-access`` gives it to; to anyone else it
does not exist (404), as in Nova.
"""
from __future__ import annotations

from urllib.parse import urlencode

from cellplane.objects import flavors
from cellplane_api import errors
from cellplane_api.policies import flavors as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import flavors as schemas
from cellplane_api.schemas import validate
from cellplane_api.views.links import links


def _at_least(req, minor: int) -> bool:
    return req.mv is not None and (req.mv.major, req.mv.minor) >= (2, minor)


def _brief(req, flavor: flavors.FlavorRecord) -> dict:
    doc = {'id': flavor.flavorid, 'name': flavor.name,
           'links': links(req, 'flavors', flavor.flavorid)}
    if _at_least(req, 55):
        doc['description'] = flavor.description
    return doc


def _detail(req, flavor: flavors.FlavorRecord, *, extra_specs: bool | None = None) -> dict:
    """``extra_specs``: whether to show them (2.61); None asks the policy."""
    doc = {**_brief(req, flavor), 'ram': flavor.memory_mb, 'disk': flavor.root_gb,
           'vcpus': flavor.vcpus, 'OS-FLV-EXT-DATA:ephemeral': 0,
           'OS-FLV-DISABLED:disabled': flavor.disabled,
           'os-flavor-access:is_public': flavor.is_public, 'swap': '', 'rxtx_factor': 1.0}
    if extra_specs is None:
        extra_specs = _at_least(req, 61) and req.allowed(rules.EXTRA_SPECS_INDEX)
    if extra_specs:
        doc['extra_specs'] = dict(flavor.extra_specs)
    return doc


def visible(req, flavor_id: str) -> flavors.FlavorRecord | None:
    """The flavor if the caller may see it: public, an admin, or its project given access."""
    flavor = flavors.find(req.services.api_engine, flavor_id)
    if flavor is None:
        return None
    if flavor.is_public or req.is_admin():
        return flavor
    granted = flavors.projects_with_access(req.services.api_engine, [flavor_id])
    return flavor if req.credentials.project_id in granted.get(flavor_id, ()) else None


def _get(req) -> flavors.FlavorRecord:
    flavor_id = req.urlvars['flavor_id']
    flavor = visible(req, flavor_id)
    if flavor is None:
        raise errors.NotFound(f'Flavor {flavor_id} could not be found.')
    return flavor


def _listed(req) -> list[flavors.FlavorRecord]:
    """As Nova lists: public ones and the private ones the caller's project has access to;
    an admin may ask ``is_public=false`` (private only) or ``is_public=none`` (all)."""
    asked = req.GET.get('is_public', 'true').strip().lower() if req.is_admin() else 'true'
    if asked not in ('true', 't', 'yes', '1', 'on', 'false', 'f', 'no', '0', 'off', 'none'):
        raise errors.BadRequest(f'Invalid is_public filter [{asked}]')
    every = flavors.list_all(req.services.api_engine)
    if asked == 'none':
        chosen = every
    elif asked in ('false', 'f', 'no', '0', 'off'):
        chosen = [f for f in every if not f.is_public]
    else:
        granted = flavors.projects_with_access(req.services.api_engine)
        project = req.credentials.project_id
        chosen = [f for f in every if f.is_public or project in granted.get(f.flavorid, ())]
    for param, attr in (('minRam', 'memory_mb'), ('minDisk', 'root_gb')):
        if req.GET.get(param) is not None:
            least = _whole(param, req.GET[param])
            chosen = [f for f in chosen if getattr(f, attr) >= least]
    return _sorted(req, chosen)


def _whole(param: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise errors.BadRequest(f'Invalid input for query parameters {param}. Value: {value}. '
                                f'It is not a whole number >= 0.')
    return number


# Nova's flavor sort keys and the attribute each sorts by.
_SORT_KEYS = {'created_at': None, 'description': 'description', 'disabled': 'disabled',
              'ephemeral_gb': None, 'flavorid': 'flavorid', 'id': None, 'is_public': 'is_public',
              'memory_mb': 'memory_mb', 'name': 'name', 'root_gb': 'root_gb',
              'rxtx_factor': None, 'swap': None, 'updated_at': None, 'vcpu_weight': None,
              'vcpus': 'vcpus'}


def _sorted(req, chosen: list[flavors.FlavorRecord]) -> list[flavors.FlavorRecord]:
    """As Nova sorts flavors: ``flavorid`` ascending unless ``sort_key``/``sort_dir`` say."""
    key = req.GET.get('sort_key', 'flavorid')
    direction = req.GET.get('sort_dir', 'asc')
    if key not in _SORT_KEYS:
        raise errors.BadRequest(f'Invalid input for query parameters sort_key. Value: {key}. '
                                f'It must be one of {", ".join(sorted(_SORT_KEYS))}.')
    if direction not in ('asc', 'desc'):
        raise errors.BadRequest(f'Invalid input for query parameters sort_dir. Value: '
                                f'{direction}. It must be asc or desc.')
    # Columns cellplane's flavors do not have hold one value for all: the
    # order is then flavorid's, Nova's tie-breaker.
    chosen = sorted(chosen, key=lambda f: f.flavorid, reverse=direction == 'desc')
    attr = _SORT_KEYS[key]
    if attr is not None and attr != 'flavorid':
        chosen.sort(key=lambda f: (getattr(f, attr) is not None, getattr(f, attr) or 0)
                    if attr == 'description' else getattr(f, attr),
                    reverse=direction == 'desc')
    return chosen


def _page(req, chosen: list[flavors.FlavorRecord], kind: str) -> tuple[list, dict]:
    """The page ``limit``/``marker`` ask for, and its ``flavors_links`` when more follow."""
    marker = req.GET.get('marker')
    if marker:
        at = next((i for i, f in enumerate(chosen) if f.flavorid == marker), None)
        if at is None:
            raise errors.BadRequest(f'marker [{marker}] not found')
        chosen = chosen[at + 1:]
    limit = _whole('limit', req.GET['limit']) if req.GET.get('limit') is not None else 1000
    page = chosen[:min(limit, 1000)]
    if len(chosen) <= len(page) or not page:
        return page, {}
    query = {k: v for k, v in req.GET.items() if k != 'marker'}
    query['marker'] = page[-1].flavorid
    return page, {'flavors_links': [{'rel': 'next', 'href': f'{req.link_base()}/{kind}?'
                                                          f'{urlencode(query)}'}]}


def list_flavors(req):
    page, more = _page(req, _listed(req), 'flavors')
    return json_response({'flavors': [_brief(req, f) for f in page], **more})


def list_flavors_detail(req):
    page, more = _page(req, _listed(req), 'flavors/detail')
    specs = _at_least(req, 61) and req.allowed(rules.EXTRA_SPECS_INDEX)
    return json_response({'flavors': [_detail(req, f, extra_specs=specs) for f in page],
                          **more})


def show_flavor(req):
    return json_response({'flavor': _detail(req, _get(req))})


def update_flavor(req):
    """2.55: ``{"flavor": {"description": "..."}}``; the flavor as shown. Below 2.55 no such route."""
    if not _at_least(req, 55):
        raise errors.NotFound('The resource could not be found.')
    req.authorize(rules.UPDATE)
    body = req.json_body()
    validate(schemas.UPDATE_V255, body)
    flavor = _get(req)
    try:
        updated = flavors.set_description(req.services.api_engine, flavor.flavorid,
                                          body['flavor']['description'])
    except flavors.FlavorNotFound:
        raise errors.NotFound(f'Flavor {flavor.flavorid} could not be found.') from None
    return json_response({'flavor': _detail(req, updated)})


def create_flavor(req):
    req.authorize(rules.CREATE)
    body = req.json_body()
    validate(schemas.CREATE_V255 if _at_least(req, 55) else schemas.CREATE, body)
    asked = body['flavor']
    for field, default in (('OS-FLV-EXT-DATA:ephemeral', 0), ('swap', 0)):
        if int(asked.get(field, default)) != default:
            raise errors.BadRequest(f'Invalid input for field/attribute {field}: cellplane '
                                    f'flavors have none; only 0 is accepted.')
    if float(asked.get('rxtx_factor', 1.0)) != 1.0:
        raise errors.BadRequest('Invalid input for field/attribute rxtx_factor: only 1.0 '
                                'is accepted.')
    try:
        created = flavors.create(req.services.api_engine, name=asked['name'],
                                 vcpus=int(asked['vcpus']), memory_mb=int(asked['ram']),
                                 root_gb=int(asked['disk']), flavorid=asked.get('id'),
                                 is_public=asked.get('os-flavor-access:is_public', True),
                                 description=asked.get('description'))
    except flavors.FlavorError as exc:
        if 'exists' in str(exc):
            raise errors.Conflict(f'Flavor with name {asked["name"]} or id '
                                  f'{asked.get("id")} already exists.') from None
        raise errors.BadRequest(str(exc)) from None
    return json_response({'flavor': _detail(req, created)})


def delete_flavor(req):
    req.authorize(rules.DELETE)
    flavor = _get(req)
    flavors.delete(req.services.api_engine, flavor.flavorid)
    return empty_response(202)


def list_extra_specs(req):
    req.authorize(rules.EXTRA_SPECS_INDEX)
    return json_response({'extra_specs': dict(_get(req).extra_specs)})


def show_extra_spec(req):
    req.authorize(rules.EXTRA_SPECS_SHOW)
    key = req.urlvars['key']
    specs = _get(req).extra_specs
    if key not in specs:
        raise errors.NotFound(f'Flavor {req.urlvars["flavor_id"]} has no extra specs with '
                              f'key {key}.')
    return json_response({key: specs[key]})


def _specs_refused(exc: flavors.FlavorError) -> errors.BadRequest:
    return errors.BadRequest(f'Invalid input for field/attribute extra_specs: {exc}')


def create_extra_specs(req):
    """``{"extra_specs": {"trait:HW_CPU_X86_AVX2": "required"}}``: the ones asked, as set."""
    req.authorize(rules.EXTRA_SPECS_CREATE)
    body = req.json_body()
    validate(schemas.SET_EXTRA_SPECS, body)
    asked = {k: str(v) for k, v in body['extra_specs'].items()}
    flavor = _get(req)
    try:
        flavors.set_extra_specs(req.services.api_engine, flavor.flavorid, asked)
    except flavors.FlavorNotFound:
        raise errors.NotFound(f'Flavor {flavor.flavorid} could not be found.') from None
    except flavors.FlavorError as exc:
        raise _specs_refused(exc) from None
    return json_response({'extra_specs': asked})


def update_extra_spec(req):
    """``{"KEY": "VALUE"}``, KEY the one of the URL."""
    req.authorize(rules.EXTRA_SPECS_UPDATE)
    body = req.json_body()
    validate(schemas.UPDATE_EXTRA_SPEC, body)
    key = req.urlvars['key']
    if key not in body:
        raise errors.BadRequest('Request body and URI mismatch')
    flavor = _get(req)
    try:
        flavors.set_extra_specs(req.services.api_engine, flavor.flavorid, {key: str(body[key])})
    except flavors.FlavorNotFound:
        raise errors.NotFound(f'Flavor {flavor.flavorid} could not be found.') from None
    except flavors.FlavorError as exc:
        raise _specs_refused(exc) from None
    return json_response({key: str(body[key])})


def delete_extra_spec(req):
    req.authorize(rules.EXTRA_SPECS_DELETE)
    key = req.urlvars['key']
    flavor = _get(req)
    try:
        flavors.unset_extra_spec(req.services.api_engine, flavor.flavorid, key)
    except (KeyError, flavors.FlavorNotFound):
        raise errors.NotFound(f'Flavor {flavor.flavorid} has no extra specs with key '
                              f'{key}.') from None
    return empty_response(200)


def _access(flavor_id: str, projects: list[str]):
    return json_response({'flavor_access': [{'flavor_id': flavor_id, 'tenant_id': project}
                                            for project in projects]})


def list_flavor_access(req):
    """``{"flavor_access": [{"flavor_id": "f", "tenant_id": "p"}, ...]}``; 404 for a public flavor."""
    req.authorize(rules.ACCESS_INDEX)
    flavor = _get(req)
    if flavor.is_public:
        raise errors.NotFound('Access list not available for public flavors.')
    granted = flavors.projects_with_access(req.services.api_engine, [flavor.flavorid])
    return _access(flavor.flavorid, granted.get(flavor.flavorid, []))


def flavor_action(req):
    """``{"addTenantAccess": {"tenant": "p"}}`` or ``{"removeTenantAccess": {"tenant": "p"}}``."""
    body = req.json_body()
    validate(schemas.ACCESS_ACTION, body)
    adding = 'addTenantAccess' in body
    req.authorize(rules.ACCESS_ADD if adding else rules.ACCESS_REMOVE)
    project = (body['addTenantAccess'] if adding else body['removeTenantAccess'])['tenant']
    flavor = _get(req)
    engine = req.services.api_engine
    if adding:
        if flavor.is_public:
            raise errors.Conflict('Can not add access to a public flavor.')
        try:
            projects = flavors.add_access(engine, flavor.flavorid, project)
        except flavors.FlavorAccessError:
            raise errors.Conflict(f'Flavor access already exists for flavor '
                                  f'{flavor.flavorid} and project {project} combination.') from None
    else:
        try:
            projects = flavors.remove_access(engine, flavor.flavorid, project)
        except flavors.FlavorAccessError:
            raise errors.NotFound(f'Flavor access not found for {flavor.flavorid} / '
                                  f'{project} combination.') from None
    return _access(flavor.flavorid, projects)
