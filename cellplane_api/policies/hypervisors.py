"""``os-hypervisors`` rules, with Nova's names and defaults: every one admin only."""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

LIST = 'os_compute_api:os-hypervisors:list'
LIST_DETAIL = 'os_compute_api:os-hypervisors:list-detail'
STATISTICS = 'os_compute_api:os-hypervisors:statistics'
SHOW = 'os_compute_api:os-hypervisors:show'
UPTIME = 'os_compute_api:os-hypervisors:uptime'
SEARCH = 'os_compute_api:os-hypervisors:search'
SERVERS = 'os_compute_api:os-hypervisors:servers'


def _rule(name: str, description: str, path: str) -> policy.DocumentedRuleDefault:
    return policy.DocumentedRuleDefault(
        name=name, check_str=base.ADMIN, description=description,
        operations=[{'method': 'GET', 'path': path}], scope_types=base.PROJECT_SCOPE)


rules = [
    _rule(LIST, 'List all hypervisors.', '/os-hypervisors'),
    _rule(LIST_DETAIL, 'List all hypervisors with details', '/os-hypervisors/detail'),
    _rule(STATISTICS, 'Show summary statistics for all hypervisors over all compute nodes.',
          '/os-hypervisors/statistics'),
    _rule(SHOW, 'Show details for a hypervisor.', '/os-hypervisors/{hypervisor_id}'),
    _rule(UPTIME, 'Show the uptime of a hypervisor.', '/os-hypervisors/{hypervisor_id}/uptime'),
    _rule(SEARCH, 'Search hypervisor by hypervisor_hostname pattern.',
          '/os-hypervisors/{hypervisor_hostname_pattern}/search'),
    _rule(SERVERS, 'List all servers on hypervisors that can match the provided '
                   'hypervisor_hostname pattern.',
          '/os-hypervisors/{hypervisor_hostname_pattern}/servers'),
]
