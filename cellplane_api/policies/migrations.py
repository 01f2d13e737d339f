"""Migration rules, with Nova's names and defaults: every migration is the admin's to see or act on.

``os_compute_api:os-migrations:index`` lists every cell's migrations;
``os_compute_api:servers:migrations:*`` are a server's in-progress live
migrations: list, show, abort (``delete``) and ``force_complete``.
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

INDEX = 'os_compute_api:os-migrations:index'
SERVER_INDEX = 'os_compute_api:servers:migrations:index'
SERVER_SHOW = 'os_compute_api:servers:migrations:show'
SERVER_DELETE = 'os_compute_api:servers:migrations:delete'
SERVER_FORCE_COMPLETE = 'os_compute_api:servers:migrations:force_complete'

rules = [
    policy.DocumentedRuleDefault(
        name=INDEX, check_str=base.ADMIN, description='List migrations',
        operations=[{'method': 'GET', 'path': '/os-migrations'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SERVER_FORCE_COMPLETE, check_str=base.ADMIN,
        description='Force an in-progress live migration for a given server to complete',
        operations=[{'method': 'POST',
                     'path': '/servers/{server_id}/migrations/{migration_id}/action '
                             '(force_complete)'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SERVER_DELETE, check_str=base.ADMIN,
        description='Delete(Abort) an in-progress live migration',
        operations=[{'method': 'DELETE',
                     'path': '/servers/{server_id}/migrations/{migration_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SERVER_INDEX, check_str=base.ADMIN,
        description='Lists in-progress live migrations for a given server',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/migrations'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SERVER_SHOW, check_str=base.ADMIN,
        description='Show details for an in-progress live migration for a given server',
        operations=[{'method': 'GET',
                     'path': '/servers/{server_id}/migrations/{migration_id}'}],
        scope_types=base.PROJECT_SCOPE),
]
