"""/resource_providers/{uuid}/aggregates (from 1.1; generations from 1.19)."""
from __future__ import annotations

from placement import errors
from placement.db import api as db_api
from placement.microversion import min_version
from placement.objects import aggregate as agg_obj
from placement.objects import resource_provider as rp_obj
from placement.response import json_response, latest
from placement.schemas import aggregate as schema


def _send(req, uuids: list[str], generation: int, modified):
    """{"aggregates": [uuid, ...], "resource_provider_generation": 1}  (generation 1.19+)"""
    body = {'aggregates': uuids}
    if req.mv >= (1, 19):
        body['resource_provider_generation'] = generation
    return json_response(req, body, last_modified=modified)


@min_version('1.1')
def get_aggregates(req):
    with db_api.reader(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        rows = agg_obj.for_provider(conn, rp.id)
    modified = latest(*(latest(r.updated_at, r.created_at) for r in rows))
    return _send(req, [r.uuid for r in rows], rp.generation, modified)


@min_version('1.1')
def set_aggregates(req):
    """PUT: replace the provider's aggregates. 1.19+ takes and checks the
    generation ({"aggregates": [...], "resource_provider_generation": N})
    and bumps it; before, the body is the bare list."""
    req.require_json()
    with db_api.writer(req.context) as conn:
        rp = rp_obj.get_by_uuid(conn, req.urlvars['uuid'])
        generation = rp.generation
        if req.mv >= (1, 19):
            data = req.json_body(schema.PUT_AGGREGATES_SCHEMA_V1_19)
            if data['resource_provider_generation'] != rp.generation:
                raise errors.Conflict(
                    'Update conflict: Another thread concurrently updated the '
                    'resource provider data. Please retry your update',
                    code=errors.CONCURRENT_UPDATE)
            uuids = data['aggregates']
        else:
            uuids = req.json_body(schema.PUT_AGGREGATES_SCHEMA_V1_1)
        uuids = [str(rp_obj.uuidlib.UUID(u)) for u in uuids]
        if req.mv >= (1, 19):
            # Bump first: it locks the provider row (see handlers/inventory.py).
            generation = rp_obj.bump_generation(conn, rp.id, rp.generation)
        agg_obj.set_for_provider(conn, rp.id, uuids)
    return _send(req, uuids, generation, None)
