"""The generic rules every Placement policy is written in terms of, and the
helper the per-resource modules declare their rules with.

Names, check strings and scope types are the reference's (Placement
16.0.0), so an operator's policy file carries over: admins and the
``service`` role may do everything; a project reader may only read its
own project's ``/usages``. Under the legacy defaults
(``[oslo_policy] enforce_new_defaults = false``) every rule also accepts
the deprecated ``role:admin``.
"""
from __future__ import annotations

from oslo_log import versionutils
from oslo_policy import policy

ADMIN_API = 'rule:admin_api'
ADMIN_OR_SERVICE = 'rule:admin_or_service_api'
SERVICE = 'rule:service_api'
ADMIN_OR_PROJECT_READER_OR_SERVICE = 'rule:admin_or_project_reader_or_service_api'

# Every Placement API is project scoped: a system-scoped token is refused
# (oslo.policy 6 always checks scope_types; it has no enforce_scope).
PROJECT_SCOPE = ['project']

_DEPRECATED_REASON = """
Placement API policies are introducing new default roles with scope_type
capabilities. Old policies are deprecated and silently going to be ignored
in the placement 6.0.0 (Xena) release.
"""

# What each rule was before the secure-RBAC defaults: the admin alone.
DEPRECATED_ADMIN = policy.DeprecatedRule(
    name=ADMIN_API, check_str='role:admin',
    deprecated_reason=_DEPRECATED_REASON, deprecated_since=versionutils.deprecated.WALLABY)

rules = [
    policy.RuleDefault(
        'admin_api', 'role:admin',
        description='Default rule for most placement APIs.',
        scope_types=PROJECT_SCOPE),
    policy.RuleDefault(
        'service_api', 'role:service',
        description='Default rule for service-to-service placement APIs.',
        scope_types=PROJECT_SCOPE, deprecated_rule=DEPRECATED_ADMIN),
    policy.RuleDefault(
        'admin_or_service_api', 'role:admin or role:service',
        description='Default rule for most placement APIs.',
        scope_types=PROJECT_SCOPE, deprecated_rule=DEPRECATED_ADMIN),
    policy.RuleDefault(
        'project_reader_api', 'role:reader and project_id:%(project_id)s',
        description='Default rule for Project level reader APIs.',
        deprecated_rule=DEPRECATED_ADMIN),
    policy.RuleDefault(
        'admin_or_project_reader_or_service_api',
        'role:admin or rule:project_reader_api or role:service',
        description='Default rule for project level reader APIs.',
        scope_types=PROJECT_SCOPE, deprecated_rule=DEPRECATED_ADMIN),
]


def api_rule(name: str, check_str: str, description: str,
             *operations: tuple[str, str]) -> policy.DocumentedRuleDefault:
    """A documented, project-scoped rule guarding ``operations`` ((method, path) pairs).

    The operations are also how ``placement.policy`` finds the rule of a
    route, so each path is spelled exactly as in ``placement/handler.py``.
    """
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path} for method, path in operations],
        scope_types=PROJECT_SCOPE)
