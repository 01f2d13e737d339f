"""``os-simple-tenant-usage`` rules, Nova's names and defaults: admins list every project's, a project reads its own."""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

LIST = 'os_compute_api:os-simple-tenant-usage:list'
SHOW = 'os_compute_api:os-simple-tenant-usage:show'

rules = [
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show usage statistics for a specific tenant',
        operations=[{'method': 'GET', 'path': '/os-simple-tenant-usage/{tenant_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.ADMIN,
        description='List per tenant usage statistics for all tenants',
        operations=[{'method': 'GET', 'path': '/os-simple-tenant-usage'}],
        scope_types=base.PROJECT_SCOPE),
]
