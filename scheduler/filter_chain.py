"""Run the enabled filters over the hosts, in order, counting who removed what."""
from __future__ import annotations

from typing import Sequence

from scheduler.filters.base import HostFilter
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.trace import FilterStep


def run_filters(filters: Sequence[HostFilter], hosts: Sequence[HostState],
                request: SchedulingRequest) -> tuple[list[HostState], list[FilterStep]]:
    """The hosts every filter accepts, and one FilterStep per filter that ran.

    Filters the request asks nothing of (``applies`` is False) are skipped;
    filters after the one that removed the last host are not run.
    """
    remaining = list(hosts)
    steps = []
    for host_filter in filters:
        if not remaining:
            break
        if not host_filter.applies(request):
            continue
        step = FilterStep(filter=host_filter.name, hosts_in=len(remaining),
                          hosts_out=0)
        kept = []
        for host in remaining:
            rejection = host_filter.check(host, request)
            if rejection is None:
                kept.append(host)
                continue
            step.reasons[rejection.reason] = step.reasons.get(rejection.reason, 0) + 1
            step.rejected[f'{host.host}/{host.nodename}'] = rejection.detail
        step.hosts_out = len(kept)
        steps.append(step)
        remaining = kept
    return remaining, steps
