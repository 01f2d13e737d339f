"""``/flavors``: list, detail, show, create, delete, and ``os-extra_specs``, at 2.1.

A flavor document at 2.1::

    {"id": "small", "name": "small", "ram": 512, "disk": 10, "vcpus": 1,
     "OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": false,
     "os-flavor-access:is_public": true, "swap": "", "rxtx_factor": 1.0,
     "links": [{"rel": "self", ...}, {"rel": "bookmark", ...}]}

cellplane's flavors have no ephemeral disk, swap or RX/TX factor and are
all public: a create asking for other values is refused naming the field.
"""
from __future__ import annotations

from cellplane.objects import flavors
from cellplane_api import errors
from cellplane_api.policies import flavors as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import flavors as schemas
from cellplane_api.schemas import validate


def links(req, kind: str, ident: str) -> list[dict]:
    return [{'rel': 'self', 'href': f'{req.link_base()}/{kind}/{ident}'},
            {'rel': 'bookmark', 'href': f'{req.host_url}{req.prefix.removeprefix("/v2.1")}'
                                        f'/{kind}/{ident}'}]


def _brief(req, flavor: flavors.FlavorRecord) -> dict:
    return {'id': flavor.flavorid, 'name': flavor.name,
            'links': links(req, 'flavors', flavor.flavorid)}


def _detail(req, flavor: flavors.FlavorRecord) -> dict:
    return {**_brief(req, flavor), 'ram': flavor.memory_mb, 'disk': flavor.root_gb,
            'vcpus': flavor.vcpus, 'OS-FLV-EXT-DATA:ephemeral': 0,
            'OS-FLV-DISABLED:disabled': flavor.disabled,
            'os-flavor-access:is_public': True, 'swap': '', 'rxtx_factor': 1.0}


def _get(req) -> flavors.FlavorRecord:
    flavor_id = req.urlvars['flavor_id']
    found = [f for f in flavors.list_all(req.services.api_engine) if f.flavorid == flavor_id]
    if not found:
        raise errors.NotFound(f'Flavor {flavor_id} could not be found.')
    return found[0]


def _listed(req) -> list[flavors.FlavorRecord]:
    # Nova sorts by flavorid ascending by default.
    return sorted(flavors.list_all(req.services.api_engine), key=lambda f: f.flavorid)


def list_flavors(req):
    return json_response({'flavors': [_brief(req, f) for f in _listed(req)]})


def list_flavors_detail(req):
    return json_response({'flavors': [_detail(req, f) for f in _listed(req)]})


def show_flavor(req):
    return json_response({'flavor': _detail(req, _get(req))})


def create_flavor(req):
    req.authorize(rules.CREATE)
    body = req.json_body()
    validate(schemas.CREATE, body)
    asked = body['flavor']
    for field, default in (('OS-FLV-EXT-DATA:ephemeral', 0), ('swap', 0)):
        if int(asked.get(field, default)) != default:
            raise errors.BadRequest(f'Invalid input for field/attribute {field}: cellplane '
                                    f'flavors have none; only 0 is accepted.')
    if float(asked.get('rxtx_factor', 1.0)) != 1.0:
        raise errors.BadRequest('Invalid input for field/attribute rxtx_factor: only 1.0 '
                                'is accepted.')
    if asked.get('os-flavor-access:is_public', True) is not True:
        raise errors.BadRequest('Invalid input for field/attribute os-flavor-access:is_public: '
                                'private flavors are not supported yet.')
    try:
        created = flavors.create(req.services.api_engine, name=asked['name'],
                                 vcpus=int(asked['vcpus']), memory_mb=int(asked['ram']),
                                 root_gb=int(asked['disk']), flavorid=asked.get('id'))
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
