"""Server action rules for moves, with Nova's names and defaults.

Migrate, live migrate and evacuate: admin; resize, confirm, revert: the project's members.
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

MIGRATE = 'os_compute_api:os-migrate-server:migrate'
MIGRATE_LIVE = 'os_compute_api:os-migrate-server:migrate_live'
RESIZE = 'os_compute_api:servers:resize'
CONFIRM_RESIZE = 'os_compute_api:servers:confirm_resize'
REVERT_RESIZE = 'os_compute_api:servers:revert_resize'
EVACUATE = 'os_compute_api:os-evacuate'

_ACTION = [{'method': 'POST', 'path': '/servers/{server_id}/action'}]

rules = [
    policy.DocumentedRuleDefault(
        name=MIGRATE, check_str=base.ADMIN, description='Cold migrate a server to a host',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (migrate)'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=MIGRATE_LIVE, check_str=base.ADMIN, description='Live migrate a server to a host',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (os-migrateLive)'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=RESIZE, check_str=base.PROJECT_MEMBER_OR_ADMIN, description='Resize a server',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (resize)'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=CONFIRM_RESIZE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Confirm a server resize',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (confirmResize)'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=REVERT_RESIZE, check_str=base.PROJECT_MEMBER_OR_ADMIN,
        description='Revert a server resize',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (revertResize)'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EVACUATE, check_str=base.ADMIN,
        description='Evacuate a server from a failed host to a new host',
        operations=[{'method': 'POST', 'path': '/servers/{server_id}/action (evacuate)'}],
        scope_types=base.PROJECT_SCOPE),
]
