"""AggregateInstanceExtraSpecsFilter: do the host's aggregates carry the metadata the flavor asks for?

Flavor extra specs ``aggregate_instance_extra_specs:KEY=VALUE`` must each
match the metadata of at least one aggregate of the host. An aggregate value
may list several values separated by commas ("ssd,nvme"); any of them matches.
"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest

SCOPE = 'aggregate_instance_extra_specs:'
METADATA_MISSING = 'aggregate metadata key missing'
METADATA_MISMATCH = 'aggregate metadata value does not match'


class AggregateInstanceExtraSpecsFilter(HostFilter):
    name = 'AggregateInstanceExtraSpecsFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return any(k.startswith(SCOPE) for k in request.spec.flavor.extra_specs)

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        wanted = {k[len(SCOPE):]: v for k, v in request.spec.flavor.extra_specs.items()
                  if k.startswith(SCOPE)}
        if not wanted:
            return None
        available: dict[str, set[str]] = {}
        for aggregate in host.record.aggregates:
            for key, value in aggregate.metadata.items():
                available.setdefault(key, set()).update(
                    v.strip() for v in str(value).split(','))
        for key, value in sorted(wanted.items()):
            if key not in available:
                return self.reject(METADATA_MISSING,
                                   f'no aggregate of the host has metadata {key!r}')
            if value.strip() not in available[key]:
                return self.reject(
                    METADATA_MISMATCH,
                    f'aggregate metadata {key} is {",".join(sorted(available[key]))}, '
                    f'flavor wants {value}')
        return None
