"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (from 1.6)."""
from __future__ import annotations

import re

from placement import errors
from placement.db import api as db_api
from placement.microversion import min_version
from placement.objects import resource_provider as rp_obj
from placement.objects import trait as trait_obj
from placement.response import json_response, latest, no_content
from placement.schemas import trait as schema

_CUSTOM_TRAIT_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')


def _url(req, name: str) -> str:
    return f'{req.script_name}/traits/{name}'


@min_version('1.6')
def put_trait(req):
    """Create custom trait {name}: 201 created, 204 already there."""
    name = req.urlvars['name']
    if len(name) > 255 or not _CUSTOM_TRAIT_RE.match(name):
        raise errors.BadRequest(
            'The trait is invalid. A valid trait must be no longer than 255 '
            'characters, start with the prefix "CUSTOM_" and use following '
            'characters: "A"-"Z", "0"-"9" and "_"')
    with db_api.writer(req.context) as conn:
        created, row = trait_obj.ensure(conn, name)
    return no_content(req, status=201 if created else 204, location=_url(req, name),
                      last_modified=latest(row.updated_at, row.created_at))


@min_version('1.6')
def get_trait(req):
    with db_api.reader(req.context) as conn:
        row = trait_obj.get(conn, req.urlvars['name'])
    return no_content(req, last_modified=latest(row.updated_at, row.created_at))


get_trait.any_accept = True   # no body to negotiate, as the reference


@min_version('1.6')
def delete_trait(req):
    with db_api.writer(req.context) as conn:
        trait_obj.delete(conn, req.urlvars['name'])
    return no_content(req)


@min_version('1.6')
def list_traits(req):
    """GET /traits?name=in:A,B|startswith:P&associated=true|false::

        {"traits": ["CUSTOM_A", "HW_CPU_X86_SSE", ...]}
    """
    params = req.query_params(schema.LIST_TRAIT_SCHEMA)
    filters = {}
    if 'name' in params:
        value = params['name']
        if value.startswith('in:'):
            filters['names'] = [n for n in value[3:].split(',')]
        elif value.startswith('startswith:'):
            filters['prefix'] = value[len('startswith:'):]
        else:
            raise errors.BadRequest(
                'Badly formatted name parameter. Expected name query string '
                'parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. '
                f'Got: "{value}"')
    if 'associated' in params:
        value = params['associated'].lower()
        if value not in ('true', 'false'):
            raise errors.BadRequest(
                'The query parameter "associated" only accepts "true" or "false"')
        filters['associated'] = value == 'true'
    with db_api.reader(req.context) as conn:
        rows = trait_obj.list_traits(conn, **filters)
    modified = latest(*(latest(r.updated_at, r.created_at) for r in rows))
    return json_response(req, {'traits': [r.name for r in rows]},
                         last_modified=modified)


def _provider_traits_body(rows, generation: int) -> dict:
    return {'traits': [r.name for r in rows],
            'resource_provider_generation': generation}


@min_version('1.6')
def list_traits_for_resource_provider(req):
    """{"traits": [...], "resource_provider_generation": 1}"""
    uuid = req.urlvars['uuid']
    with db_api.reader(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, uuid)
        rows = trait_obj.for_provider(conn, rp.id)
    modified = latest(rp.updated_at, rp.created_at,
                      *(latest(r.updated_at, r.created_at) for r in rows))
    return json_response(req, _provider_traits_body(rows, rp.generation),
                         last_modified=modified)


@min_version('1.6')
def update_traits_for_resource_provider(req):
    """Replace the provider's traits; checks and bumps its generation."""
    uuid = req.urlvars['uuid']
    data = req.json_body(schema.SET_TRAITS_FOR_RP_SCHEMA)
    with db_api.writer(req.context) as conn:
        # Bump first: it locks the provider row (see handlers/inventory.py).
        rp_id, generation = rp_obj.bump_generation_of(
            conn, uuid, data['resource_provider_generation'])
        trait_obj.set_for_provider(conn, rp_id, data['traits'])
        rows = trait_obj.for_provider(conn, rp_id)
    return json_response(req, _provider_traits_body(rows, generation),
                         last_modified=None)


@min_version('1.6')
def delete_traits_for_resource_provider(req):
    uuid = req.urlvars['uuid']
    with db_api.writer(req.context) as conn:
        rp_id, generation = rp_obj.id_and_generation(conn, uuid)
        rp_obj.bump_generation(conn, rp_id, generation)
        trait_obj.set_for_provider(conn, rp_id, ())
    return no_content(req)
