"""``os-availability-zone`` rules, with Nova's names and defaults: anyone lists, admins see detail."""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

LIST = 'os_compute_api:os-availability-zone:list'
DETAIL = 'os_compute_api:os-availability-zone:detail'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.ANY, description='List availability zone information '
                                                  'without host information',
        operations=[{'method': 'GET', 'path': '/os-availability-zone'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DETAIL, check_str=base.ADMIN, description='List detailed availability zone '
                                                       'information with host information',
        operations=[{'method': 'GET', 'path': '/os-availability-zone/detail'}],
        scope_types=base.PROJECT_SCOPE),
]
