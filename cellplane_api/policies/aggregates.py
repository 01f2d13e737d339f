"""``os-aggregates`` rules for reading, with Nova's names and defaults: admin only."""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

INDEX = 'os_compute_api:os-aggregates:index'
SHOW = 'os_compute_api:os-aggregates:show'

rules = [
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.ADMIN, description='List all aggregates',
        operations=[{'method': 'GET', 'path': '/os-aggregates'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.ADMIN, description='Show details for an aggregate',
        operations=[{'method': 'GET', 'path': '/os-aggregates/{aggregate_id}'}],
        scope_types=base.PROJECT_SCOPE),
]
