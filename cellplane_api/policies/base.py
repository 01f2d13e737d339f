"""The generic rules the compute API's policies are written in, as Nova (2024.1 and later) defines them.

A project member may act on its own project's resources, a project reader
may read them, an admin anything. Every rule is project scoped.
"""
from __future__ import annotations

from oslo_policy import policy

ADMIN = 'rule:context_is_admin'
# Anyone with a token (Nova's RULE_ANY).
ANY = '@'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
PROJECT_SCOPE = ['project']

rules = [
    policy.RuleDefault('context_is_admin', 'role:admin',
                       description='Decides what is required for the "is_admin:True" check '
                                   'to succeed.'),
    policy.RuleDefault('admin_api', 'is_admin:True',
                       description='Default rule for most Admin APIs.'),
    policy.RuleDefault('project_member_api', 'role:member and project_id:%(project_id)s',
                       description='Default rule for Project level non admin APIs.'),
    policy.RuleDefault('project_reader_api', 'role:reader and project_id:%(project_id)s',
                       description='Default rule for Project level read only APIs.'),
    policy.RuleDefault('project_member_or_admin',
                       'rule:project_member_api or rule:context_is_admin',
                       description='Default rule for Project Member or admin APIs.'),
    policy.RuleDefault('project_reader_or_admin',
                       'rule:project_reader_api or rule:context_is_admin',
                       description='Default rule for Project reader or admin APIs.'),
]
