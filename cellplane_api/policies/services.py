"""``os-services`` rules, with Nova's names and defaults: every one admin only."""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

LIST = 'os_compute_api:os-services:list'
UPDATE = 'os_compute_api:os-services:update'
DELETE = 'os_compute_api:os-services:delete'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.ADMIN, description='List all running Compute services',
        operations=[{'method': 'GET', 'path': '/os-services'}], scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.ADMIN, description='Update a Compute service',
        operations=[{'method': 'PUT', 'path': '/os-services/enable'},
                    {'method': 'PUT', 'path': '/os-services/disable'},
                    {'method': 'PUT', 'path': '/os-services/disable-log-reason'},
                    {'method': 'PUT', 'path': '/os-services/force-down'},
                    {'method': 'PUT', 'path': '/os-services/{service_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.ADMIN, description='Delete a Compute service',
        operations=[{'method': 'DELETE', 'path': '/os-services/{service_id}'}],
        scope_types=base.PROJECT_SCOPE),
]
