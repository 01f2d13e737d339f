"""Scheduling record rules (cellplane's ``os-scheduling-records``, named as Nova names its rules).

Records name hosts, filters and every project's requests: admin only.
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

INDEX = 'os_compute_api:os-scheduling-records:index'
SHOW = 'os_compute_api:os-scheduling-records:show'

rules = [
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.ADMIN,
        description='List the newest scheduling records (why instances landed where they did)',
        operations=[{'method': 'GET', 'path': '/os-scheduling-records'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.ADMIN,
        description='Show the scheduling record of a request, whole',
        operations=[{'method': 'GET', 'path': '/os-scheduling-records/{request_id}'}],
        scope_types=base.PROJECT_SCOPE),
]
