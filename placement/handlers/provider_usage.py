"""GET /resource_providers/{uuid}/usages."""
from __future__ import annotations

from placement.db import api as db_api
from placement.objects import provider_usage
from placement.objects import resource_provider as rp_obj
from placement.response import json_response


def list_usages(req):
    """{"resource_provider_generation": 3, "usages": {"VCPU": 2, "DISK_GB": 0}}"""
    uuid = req.urlvars['uuid']
    with db_api.reader(req.context) as conn:
        rp = conn.execute(rp_obj.rp_t.select().where(rp_obj.rp_t.c.uuid == uuid)).first()
        if rp is None:
            raise rp_obj.errors.NotFound(
                f'No resource provider with uuid {uuid} found')
        usages = provider_usage.for_provider(conn, rp.id)
    return json_response(req, {'resource_provider_generation': rp.generation,
                               'usages': usages}, last_modified=None)
