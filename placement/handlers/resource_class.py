"""/resource_classes and /resource_classes/{name} (from 1.2)."""
from __future__ import annotations

from placement import errors
from placement.db import api as db_api
from placement.microversion import min_version
from placement.objects import resource_class as rc_obj
from placement.request import validate
from placement.response import json_response, latest, no_content
from placement.schemas import resource_class as schema


def _url(req, name: str) -> str:
    return f'{req.script_name}/resource_classes/{name}'


def _serialize(req, name: str) -> dict:
    """{"name": "VCPU", "links": [{"rel": "self", "href": "/resource_classes/VCPU"}]}"""
    return {'name': name, 'links': [{'rel': 'self', 'href': _url(req, name)}]}


@min_version('1.2')
def list_resource_classes(req):
    with db_api.reader(req.context) as conn:
        rows = rc_obj.list_all(conn)
    # Standard classes are "modified" whenever the service (re)starts, so
    # the reference reports now for the list: so do we.
    return json_response(
        req, {'resource_classes': [_serialize(req, r.name) for r in rows]},
        last_modified=None)


@min_version('1.2')
def get_resource_class(req):
    name = req.urlvars['name']
    with db_api.reader(req.context) as conn:
        row = rc_obj.get(conn, name)
    modified = None if name in rc_obj.STANDARD_IDS else latest(row.updated_at,
                                                                row.created_at)
    return json_response(req, _serialize(req, name), last_modified=modified)


@min_version('1.2')
def create_resource_class(req):
    data = req.json_body(schema.POST_RC_SCHEMA_V1_2)
    with db_api.writer(req.context) as conn:
        rc_obj.create(conn, data['name'])
    return no_content(req, status=201, location=_url(req, data['name']))


@min_version('1.2')
def update_resource_class(req):
    """1.2-1.6: rename a custom class (body {"name": ...}).
    1.7+: bodiless create-if-missing: 201 created, 204 already there."""
    name = req.urlvars['name']
    if req.mv >= (1, 7):
        validate(name, schema.POST_RC_SCHEMA_V1_2['properties']['name'],
                 'JSON does not validate')
        with db_api.writer(req.context) as conn:
            try:
                rc_obj.get(conn, name)
                status = 204
            except errors.NotFound:
                rc_obj.create(conn, name)
                status = 201
        return no_content(req, status=status, location=_url(req, name))
    data = req.json_body(schema.PUT_RC_SCHEMA_V1_2)
    with db_api.writer(req.context) as conn:
        row = rc_obj.rename(conn, name, data['name'])
    return json_response(req, _serialize(req, row.name))


@min_version('1.2')
def delete_resource_class(req):
    with db_api.writer(req.context) as conn:
        rc_obj.delete(conn, req.urlvars['name'])
    return no_content(req)
