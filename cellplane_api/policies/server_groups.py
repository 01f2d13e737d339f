"""Server group rules, with Nova's names and defaults (``os_compute_api:os-server-groups:*``).

The target is the group's project (the caller's own for create and list).
A group of another project is 404 to a caller the rule refuses for it, as
a server is (the handler asks before answering 403).
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

CREATE = 'os_compute_api:os-server-groups:create'
DELETE = 'os_compute_api:os-server-groups:delete'
INDEX = 'os_compute_api:os-server-groups:index'
INDEX_ALL_PROJECTS = 'os_compute_api:os-server-groups:index:all_projects'
SHOW = 'os_compute_api:os-server-groups:show'

rules = [
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Create a new server group',
        operations=[{'method': 'POST', 'path': '/os-server-groups'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN, description='Delete a server group',
        operations=[{'method': 'DELETE', 'path': '/os-server-groups/{server_group_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.PROJECT_READER_OR_ADMIN, description='List all server groups',
        operations=[{'method': 'GET', 'path': '/os-server-groups'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=INDEX_ALL_PROJECTS, check_str=base.ADMIN,
        description='List all server groups for all projects',
        operations=[{'method': 'GET', 'path': '/os-server-groups'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show details of a server group',
        operations=[{'method': 'GET', 'path': '/os-server-groups/{server_group_id}'}],
        scope_types=base.PROJECT_SCOPE),
]
