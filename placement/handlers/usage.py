"""GET /usages (1.9+): what a project, or one of its users, consumes.

    1.9   {"usages": {"VCPU": 4, "MEMORY_MB": 2048}}
    1.38  {"usages": {"INSTANCE": {"VCPU": 4, "consumer_count": 2},
                      "unknown": {"VCPU": 1, "consumer_count": 1}}}
"""
from __future__ import annotations

from placement.microversion import min_version
from placement.objects import usage as usage_obj
from placement.policy import policy_target
from placement.response import json_response
from placement.schemas import usage as schema


@min_version('1.9')
# A project reader may read its own project's usage (the reference's target).
@policy_target(lambda req: {'project_id': req.GET.get('project_id')})
def get_total_usages(req):
    by_type = req.mv >= (1, 38)
    params = req.query_params(schema.GET_1_38 if by_type else schema.GET_1_9)
    engine = req.context.engine
    if by_type:
        usages = usage_obj.by_consumer_type(
            engine, params['project_id'], params.get('user_id'),
            params.get('consumer_type'))
    else:
        usages = usage_obj.totals(engine, params['project_id'], params.get('user_id'))
    return json_response(req, {'usages': usages}, last_modified=None)
