"""/resource_providers/{uuid}/inventories and .../inventories/{resource_class}.

Inventory JSON, per class::

    {"total": 2048, "reserved": 512, "min_unit": 10, "max_unit": 1024,
     "step_size": 10, "allocation_ratio": 1.0}
"""
from __future__ import annotations

from placement import errors
from placement.db import api as db_api
from placement.microversion import min_version
from placement.objects import inventory as inv_obj
from placement.objects import resource_class as rc_obj
from placement.objects import resource_provider as rp_obj
from placement.response import json_response, latest, no_content
from placement.schemas import inventory as schema

_GENERATION_CONFLICT = 'resource provider generation conflict'

# Every write bumps the provider generation *before* changing anything: the
# UPDATE takes the provider's row lock, so a concurrent writer with the
# same generation waits, then finds it changed and gets a clean 409 instead
# of racing on the inventory rows. Any later error rolls the bump back.


def _url(req, rp_uuid: str, rc_name: str | None = None) -> str:
    url = f'{req.script_name}/resource_providers/{rp_uuid}/inventories'
    return f'{url}/{rc_name}' if rc_name else url


def _fields(row) -> dict:
    return {f: getattr(row, f) for f in inv_obj.FIELDS}


def _check_generation(rp, wanted: int) -> None:
    if rp.generation != wanted:
        raise errors.Conflict(_GENERATION_CONFLICT, code=errors.CONCURRENT_UPDATE)


def _send_all(req, conn, rp, generation: int):
    """{"resource_provider_generation": 3, "inventories": {"DISK_GB": {...}}}"""
    rows = inv_obj.get_all(conn, rp.id)
    names = rc_obj.names_by_id(conn, rows)
    body = {'resource_provider_generation': generation,
            'inventories': {names[rc]: _fields(r) for rc, r in rows.items()}}
    modified = latest(*(latest(r.updated_at, r.created_at) for r in rows.values()))
    return json_response(req, body, last_modified=modified)


def _send_one(req, row, generation: int, status: int = 200, location=None):
    body = _fields(row)
    body['resource_provider_generation'] = generation
    return json_response(req, body, status=status, location=location,
                         last_modified=latest(row.updated_at, row.created_at))


def get_inventories(req):
    with db_api.reader(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        return _send_all(req, conn, rp, rp.generation)


def get_inventory(req):
    uuid, rc_name = req.urlvars['uuid'], req.urlvars['resource_class']
    with db_api.reader(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, uuid)
        rc_id = rc_obj.ids_by_name(conn, [rc_name]).get(rc_name)
        row = None if rc_id is None else inv_obj.get_one(conn, rp.id, rc_id)
    if row is None:
        raise errors.NotFound(f'No inventory of class {rc_name} for {uuid}')
    return _send_one(req, row, rp.generation)


def create_inventory(req):
    """POST one class's inventory: 201 with it and its Location."""
    req.require_json()
    with db_api.writer(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        data = req.json_body(schema.POST_INVENTORY_SCHEMA)
        rc_name = data['resource_class']
        rc_id = rc_obj.ids_by_name(conn, [rc_name]).get(rc_name)
        if rc_id is None:
            raise errors.BadRequest(f'No such resource class {rc_name}.')
        inv = inv_obj.with_defaults(data)
        try:
            inv_obj.check_capacity(req.mv, rc_name, rp.uuid, inv)
        except ValueError as exc:
            raise errors.BadRequest(
                f'Unable to create inventory for resource provider {rp.uuid}: {exc}'
            ) from None
        generation = rp_obj.bump_generation(conn, rp.id, rp.generation)
        inv_obj.add_one(conn, rp.id, rc_id, rc_name, inv)
        row = inv_obj.get_one(conn, rp.id, rc_id)
    return _send_one(req, row, generation, status=201,
                     location=_url(req, rp.uuid, rc_name))


def set_inventories(req):
    """PUT: replace the provider's whole inventory (generation checked)."""
    req.require_json()
    with db_api.writer(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        data = req.json_body(schema.PUT_INVENTORY_SCHEMA)
        _check_generation(rp, data['resource_provider_generation'])
        wanted_names = data['inventories']
        ids = rc_obj.ids_by_name(conn, wanted_names)
        unknown = sorted(set(wanted_names) - set(ids))
        if unknown:
            raise errors.BadRequest(
                'Unknown resource class in inventory for resource provider '
                f'{rp.uuid}: No such resource class {unknown[0]}.')
        wanted = {}
        for rc_name, fields in wanted_names.items():
            inv = inv_obj.with_defaults(fields)
            try:
                inv_obj.check_capacity(req.mv, rc_name, rp.uuid, inv)
            except ValueError as exc:
                raise errors.BadRequest(
                    f'Unable to update inventory for resource provider '
                    f'{rp.uuid}: {exc}') from None
            wanted[ids[rc_name]] = inv
        generation = rp_obj.bump_generation(conn, rp.id, rp.generation)
        names = rc_obj.names_by_id(conn, set(wanted) | set(inv_obj.get_all(conn, rp.id)))
        inv_obj.replace_all(conn, rp.id, rp.uuid, wanted, names)
        return _send_all(req, conn, rp, generation)


@min_version('1.5', status_code=405)
def delete_inventories(req):
    """DELETE all the provider's inventory (1.5+; 405 before, as the reference)."""
    with db_api.writer(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        rp_obj.bump_generation(conn, rp.id, rp.generation)
        current = inv_obj.get_all(conn, rp.id)
        names = rc_obj.names_by_id(conn, current)
        inv_obj.replace_all(conn, rp.id, rp.uuid, {}, names)
    return no_content(req)


def update_inventory(req):
    """PUT one class's inventory (generation checked)."""
    rc_name = req.urlvars['resource_class']
    req.require_json()
    with db_api.writer(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        data = req.json_body(schema.BASE_INVENTORY_SCHEMA)
        _check_generation(rp, data['resource_provider_generation'])
        rc_id = rc_obj.ids_by_name(conn, [rc_name]).get(rc_name)
        if rc_id is None:
            raise errors.BadRequest(
                'No inventory record with resource class for resource provider '
                f'{rp.uuid}: No such resource class {rc_name}.')
        inv = inv_obj.with_defaults(data)
        try:
            inv_obj.check_capacity(req.mv, rc_name, rp.uuid, inv)
        except ValueError as exc:
            raise errors.BadRequest(
                f'Unable to update inventory for resource provider {rp.uuid}: {exc}'
            ) from None
        generation = rp_obj.bump_generation(conn, rp.id, rp.generation)
        inv_obj.update_one(conn, rp.id, rp.uuid, rc_id, rc_name, inv)
        row = inv_obj.get_one(conn, rp.id, rc_id)
    return _send_one(req, row, generation)


def delete_inventory(req):
    rc_name = req.urlvars['resource_class']
    with db_api.writer(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        rc_id = rc_obj.ids_by_name(conn, [rc_name]).get(rc_name)
        rp_obj.bump_generation(conn, rp.id, rp.generation)
        inv_obj.delete_one(conn, rp.id, rp.uuid, rc_id, rc_name)
    return no_content(req)
