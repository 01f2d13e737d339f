"""Instance action rules, with Nova's names and defaults (``os_compute_api:os-instance-actions:*``).

``events`` decides who sees each event's ``traceback`` (here: the reason
an attempt failed) and, from 2.62, its ``host``; below 2.51 it also decides
whether events are shown at all. An operator who wants a project's members
to read why their builds failed relaxes it (for example to
``rule:project_reader_or_admin``).
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

LIST = 'os_compute_api:os-instance-actions:list'
SHOW = 'os_compute_api:os-instance-actions:show'
EVENTS = 'os_compute_api:os-instance-actions:events'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.PROJECT_READER_OR_ADMIN, description='List actions for a server.',
        operations=[{'method': 'GET', 'path': '/servers/{server_id}/os-instance-actions'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show action details for a server.',
        operations=[{'method': 'GET',
                     'path': '/servers/{server_id}/os-instance-actions/{request_id}'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=EVENTS, check_str=base.ADMIN,
        description='Add events details in action details for a server. This check is '
                    'performed only after the check os_compute_api:os-instance-actions:show '
                    'passes. Beginning with Microversion 2.51, events can be seen by users '
                    'that pass the show check; the traceback (the reason an attempt failed) '
                    'and, from 2.62, the host of each event need this rule.',
        operations=[{'method': 'GET',
                     'path': '/servers/{server_id}/os-instance-actions/{request_id}'}],
        scope_types=base.PROJECT_SCOPE),
]
