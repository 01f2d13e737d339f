"""Quota rules, with Nova's names and defaults (``os_compute_api:os-quota-sets:*``, ``os_compute_api:limits``).

The target is the project whose quota is read or changed: a project
reader reads its own, an admin any project's; only an admin changes them.
Anyone may read the defaults and their own project's limits.
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

SHOW = 'os_compute_api:os-quota-sets:show'
UPDATE = 'os_compute_api:os-quota-sets:update'
DEFAULTS = 'os_compute_api:os-quota-sets:defaults'
DETAIL = 'os_compute_api:os-quota-sets:detail'
DELETE = 'os_compute_api:os-quota-sets:delete'
LIMITS = 'os_compute_api:limits'
LIMITS_OTHER_PROJECT = 'os_compute_api:limits:other_project'

rules = [
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.ADMIN, description='Update the quotas',
        operations=[{'method': 'PUT', 'path': '/os-quota-sets/{tenant_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DEFAULTS, check_str=base.ANY, description='List default quotas',
        operations=[{'method': 'GET', 'path': '/os-quota-sets/{tenant_id}/defaults'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN, description='Show a quota',
        operations=[{'method': 'GET', 'path': '/os-quota-sets/{tenant_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.ADMIN, description='Revert quotas to defaults',
        operations=[{'method': 'DELETE', 'path': '/os-quota-sets/{tenant_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DETAIL, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show the detail of quota',
        operations=[{'method': 'GET', 'path': '/os-quota-sets/{tenant_id}/detail'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=LIMITS, check_str=base.ANY,
        description='Show rate and absolute limits for the current user project',
        operations=[{'method': 'GET', 'path': '/limits'}], scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=LIMITS_OTHER_PROJECT, check_str=base.ADMIN,
        description='Show rate and absolute limits of the project (tenant_id)',
        operations=[{'method': 'GET', 'path': '/limits'}], scope_types=base.PROJECT_SCOPE),
]
