"""GET /resource_providers/{uuid}/usages."""
from __future__ import annotations

from placement.db import api as db_api
from placement.objects import provider_usage
from placement.objects import resource_provider as rp_obj
from placement.response import json_response


def list_usages(req):
    """{"resource_provider_generation": 3, "usages": {"VCPU": 2, "DISK_GB": 0}}"""
    with db_api.reader(req.context) as conn:
        rp_id, generation = rp_obj.id_and_generation(conn, req.urlvars['uuid'])
        usages = provider_usage.for_provider(conn, rp_id)
    return json_response(req, {'resource_provider_generation': generation,
                               'usages': usages}, last_modified=None)
