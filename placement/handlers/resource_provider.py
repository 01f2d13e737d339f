"""/resource_providers and /resource_providers/{uuid}."""
from __future__ import annotations

from placement import querystring
from placement.db import api as db_api
from placement.objects import resource_provider as rp_obj
from placement.response import json_response, latest, no_content
from placement.schemas import resource_provider as schema


def provider_url(req, uuid: str) -> str:
    return f'{req.script_name}/resource_providers/{uuid}'


def _link_rels(mv) -> tuple[str, ...]:
    rels = ['inventories', 'usages']
    if mv >= (1, 1):
        rels.append('aggregates')
    if mv >= (1, 6):
        rels.append('traits')
    if mv >= (1, 11):
        rels.append('allocations')
    return tuple(rels)


def serializer(req):
    """A function row -> provider JSON for this request (what does not
    change between providers is worked out once: lists of 5,000 are common)::

        {"uuid": ..., "name": ..., "generation": 0, "links": [...],
         "parent_provider_uuid": null, "root_provider_uuid": ...}   # 1.14+
    """
    prefix = f'{req.script_name}/resource_providers/'
    suffixes = [(rel, '/' + rel) for rel in _link_rels(req.mv)]
    nested = req.mv >= (1, 14)

    def serialize(row) -> dict:
        url = prefix + row.uuid
        links = [{'rel': 'self', 'href': url}]
        for rel, suffix in suffixes:
            links.append({'rel': rel, 'href': url + suffix})
        data = {'uuid': row.uuid, 'name': row.name, 'generation': row.generation,
                'links': links}
        if nested:
            data['parent_provider_uuid'] = row.parent_provider_uuid
            data['root_provider_uuid'] = row.root_provider_uuid
        return data
    return serialize


def serialize(req, row) -> dict:
    """One provider (see ``serializer``)."""
    return serializer(req)(row)


def create_resource_provider(req):
    """POST: 201 with no body (< 1.20) or 200 with the provider (1.20+)."""
    body_schema = (schema.POST_RP_SCHEMA_V1_14 if req.mv >= (1, 14)
                   else schema.POST_RESOURCE_PROVIDER_SCHEMA)
    data = req.json_body(body_schema)
    with db_api.writer(req.context) as conn:
        row = rp_obj.create(conn, name=data['name'], uuid=data.get('uuid'),
                            parent_uuid=data.get('parent_provider_uuid'))
    location = provider_url(req, row.uuid)
    if req.mv >= (1, 20):
        return json_response(req, serialize(req, row), location=location,
                             last_modified=latest(row.updated_at, row.created_at))
    return no_content(req, status=201, location=location)


def get_resource_provider(req):
    uuid = req.urlvars['uuid']
    with db_api.reader(req.context) as conn:
        row = rp_obj.get_by_uuid(conn, uuid)
    return json_response(req, serialize(req, row),
                         last_modified=latest(row.updated_at, row.created_at))


def update_resource_provider(req):
    """PUT: rename and/or (1.14+) set the parent; 1.37+ may re-/un-parent."""
    uuid = req.urlvars['uuid']
    req.require_json()
    with db_api.writer(req.context) as conn:
        row = rp_obj.get_by_uuid(conn, uuid)
        body_schema = (schema.PUT_RP_SCHEMA_V1_14 if req.mv >= (1, 14)
                       else schema.PUT_RESOURCE_PROVIDER_SCHEMA)
        data = req.json_body(body_schema)
        row = rp_obj.update(conn, row, data, allow_reparenting=req.mv >= (1, 37))
    return json_response(req, serialize(req, row),
                         last_modified=latest(row.updated_at, row.created_at))


def delete_resource_provider(req):
    with db_api.writer(req.context) as conn:
        rp_obj.delete(conn, req.urlvars['uuid'])
    return no_content(req)


def list_resource_providers(req):
    """GET with filters name, uuid, member_of (1.3), resources (1.4),
    in_tree (1.14), required (1.18)::

        {"resource_providers": [<provider>, ...]}
    """
    params = req.query_params(schema.list_schema(req.mv))
    filters = {}
    if 'name' in params:
        filters['name'] = params['name']
    if 'uuid' in params:
        filters['uuid'] = querystring.normalize_uuid(params['uuid'])
    if 'in_tree' in params:
        filters['in_tree'] = querystring.normalize_uuid(
            querystring.in_tree(params['in_tree']))
    if 'member_of' in params:
        filters['member_of'], filters['forbidden_aggs'] = \
            querystring.member_of_params(req)
    if 'resources' in params:
        filters['resources'] = querystring.resources(params['resources'])
    if 'required' in params:
        filters['required_traits'], filters['forbidden_traits'] = \
            querystring.required_params(req)
    with db_api.reader(req.context) as conn:
        rows = rp_obj.list_providers(conn, **filters)
    modified = latest(*(latest(r.updated_at, r.created_at) for r in rows))
    one = serializer(req)
    return json_response(req, {'resource_providers': [one(r) for r in rows]},
                         last_modified=modified)
