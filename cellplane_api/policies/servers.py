"""Server rules, with Nova's names and defaults (``os_compute_api:servers:*``).

The target of a server rule is the server's project: another project's
member is refused, and the handler answers 404 for a server the caller's
project does not own before any rule is asked (as Nova does).
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

INDEX = 'os_compute_api:servers:index'
DETAIL = 'os_compute_api:servers:detail'
INDEX_ALL_TENANTS = 'os_compute_api:servers:index:get_all_tenants'
DETAIL_ALL_TENANTS = 'os_compute_api:servers:detail:get_all_tenants'
ALLOW_ALL_FILTERS = 'os_compute_api:servers:allow_all_filters'
SHOW = 'os_compute_api:servers:show'
CREATE = 'os_compute_api:servers:create'
DELETE = 'os_compute_api:servers:delete'
EXTENDED_ATTRIBUTES = 'os_compute_api:os-extended-server-attributes'
SHOW_HOST_STATUS = 'os_compute_api:servers:show:host_status'
SHOW_HOST_STATUS_UNKNOWN_ONLY = 'os_compute_api:servers:show:host_status:unknown-only'

rules = [
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.PROJECT_READER_OR_ADMIN, description='List all servers',
        operations=[{'method': 'GET', 'path': '/servers'}], scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DETAIL, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List all servers with detailed information',
        operations=[{'method': 'GET', 'path': '/servers/detail'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=INDEX_ALL_TENANTS, check_str=base.ADMIN, description='List all servers for all projects',
        operations=[{'method': 'GET', 'path': '/servers'}], scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DETAIL_ALL_TENANTS, check_str=base.ADMIN,
        description='List all servers with detailed information for all projects',
        operations=[{'method': 'GET', 'path': '/servers/detail'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=ALLOW_ALL_FILTERS, check_str=base.ADMIN,
        description='Allow all filters when listing servers (host among them)',
        operations=[{'method': 'GET', 'path': '/servers'},
                    {'method': 'GET', 'path': '/servers/detail'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN, description='Show a server',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=CREATE, check_str=base.PROJECT_MEMBER_OR_ADMIN, description='Create a server',
        operations=[{'method': 'POST', 'path': '/servers'}], scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.PROJECT_MEMBER_OR_ADMIN, description='Delete a server',
        operations=[{'method': 'DELETE', 'path': '/servers/{server_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EXTENDED_ATTRIBUTES, check_str=base.ADMIN,
        description='Return extended attributes (OS-EXT-SRV-ATTR:*) for a server',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}'},
                    {'method': 'GET', 'path': '/servers/detail'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW_HOST_STATUS, check_str=base.ADMIN,
        description='Show a server with its host status (2.16 and later): UP, '
                    'MAINTENANCE, UNKNOWN or empty',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}'},
                    {'method': 'GET', 'path': '/servers/detail'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW_HOST_STATUS_UNKNOWN_ONLY, check_str=base.ADMIN,
        description='Show a server with its host status only when it is UNKNOWN '
                    '(2.16 and later; show:host_status, if allowed, wins)',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}'},
                    {'method': 'GET', 'path': '/servers/detail'}],
        scope_types=base.PROJECT_SCOPE),
]
