"""Flavor rules (Nova's ``os-flavor-manage``, ``os-flavor-extra-specs``, ``os-flavor-access``).

Listing and showing flavors has no rule, as in Nova.
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

CREATE = 'os_compute_api:os-flavor-manage:create'
DELETE = 'os_compute_api:os-flavor-manage:delete'
UPDATE = 'os_compute_api:os-flavor-manage:update'
EXTRA_SPECS_INDEX = 'os_compute_api:os-flavor-extra-specs:index'
EXTRA_SPECS_SHOW = 'os_compute_api:os-flavor-extra-specs:show'
ACCESS_INDEX = 'os_compute_api:os-flavor-access'
ACCESS_ADD = 'os_compute_api:os-flavor-access:add_tenant_access'
ACCESS_REMOVE = 'os_compute_api:os-flavor-access:remove_tenant_access'
EXTRA_SPECS_CREATE = 'os_compute_api:os-flavor-extra-specs:create'
EXTRA_SPECS_UPDATE = 'os_compute_api:os-flavor-extra-specs:update'
EXTRA_SPECS_DELETE = 'os_compute_api:os-flavor-extra-specs:delete'

rules = [
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.ADMIN, description='Create a flavor',
        operations=[{'method': 'POST', 'path': '/flavors'}], scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.ADMIN,
        description="Update a flavor's description (2.55 and later)",
        operations=[{'method': 'PUT', 'path': '/flavors/{flavor_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.ADMIN, description='Delete a flavor',
        operations=[{'method': 'DELETE', 'path': '/flavors/{flavor_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_INDEX, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List extra specs for a flavor',
        operations=[{'method': 'GET', 'path': '/flavors/{flavor_id}/os-extra_specs'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show an extra spec for a flavor',
        operations=[{'method': 'GET',
                     'path': '/flavors/{flavor_id}/os-extra_specs/{flavor_extra_spec_key}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_CREATE, check_str=base.ADMIN, description='Create extra specs for a flavor',
        operations=[{'method': 'POST', 'path': '/flavors/{flavor_id}/os-extra_specs'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_UPDATE, check_str=base.ADMIN, description='Update an extra spec for a flavor',
        operations=[{'method': 'PUT',
                     'path': '/flavors/{flavor_id}/os-extra_specs/{flavor_extra_spec_key}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EXTRA_SPECS_DELETE, check_str=base.ADMIN, description='Delete an extra spec for a flavor',
        operations=[{'method': 'DELETE',
                     'path': '/flavors/{flavor_id}/os-extra_specs/{flavor_extra_spec_key}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=ACCESS_INDEX, check_str=base.ADMIN, description='List flavor access information',
        operations=[{'method': 'GET', 'path': '/flavors/{flavor_id}/os-flavor-access'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=ACCESS_ADD, check_str=base.ADMIN, description='Add flavor access to a tenant',
        operations=[{'method': 'POST', 'path': '/flavors/{flavor_id}/action (addTenantAccess)'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=ACCESS_REMOVE, check_str=base.ADMIN, description='Remove flavor access from a tenant',
        operations=[{'method': 'POST',
                     'path': '/flavors/{flavor_id}/action (removeTenantAccess)'}],
        scope_types=base.PROJECT_SCOPE),
]
