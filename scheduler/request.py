"""SchedulingRequest: the question filters and weighers answer for one instance.

It wraps the RequestSpec with what the scheduler works out while it runs:
the resources one instance needs, the hosts already chosen for earlier
instances of the same request (so affinity holds inside a multi-create),
where the instances named in scheduler hints run, and where the server
group's other members are. It holds data; the server group's questions
about it are ``scheduler.server_group.counts``'.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable, Mapping

from rpc_schemas.request_spec import RequestSpec


@dataclasses.dataclass
class SchedulingRequest:
    spec: RequestSpec
    # Resource class -> amount one instance needs (from the candidates query).
    resources: Mapping[str, int]
    instance_uuid: str | None = None
    # Hosts claimed for the earlier instances of this request, in order.
    chosen_hosts: list[str] = dataclasses.field(default_factory=list)
    # Instance UUID -> host it runs on, for the instances scheduler hints name.
    instance_hosts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # (host, level) -> the host's failure-domain aggregate at that level.
    domain_of_host: Callable[[str, str], str | None] = lambda host, level: None
    # Where the group's other members are, read by the scheduler itself
    # (``scheduler.server_group.places``): domain -> members, and hosts whose
    # domain is unknown. None: only what the spec's group says (its ``hosts``).
    member_counts: Mapping[str, int] | None = None
    member_unknown: frozenset[str] = frozenset()
    # Domains another scheduler filled while this request ran.
    full_domains: frozenset[str] = frozenset()
    # ``scheduler.server_group.counts.domain_counts``, worked out once:
    # filters and weighers ask it for every host, and nothing above changes
    # while one instance is placed.
    group_counts: tuple[collections.Counter, set[str]] | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False)

    def hint(self, name: str) -> list[str]:
        return list(self.spec.scheduler_hints.get(name) or ())

    def hosts_of_hinted(self, name: str) -> set[str]:
        """Hosts of the instances listed in hint ``name`` that could be located."""
        return {self.instance_hosts[u] for u in self.hint(name)
                if u in self.instance_hosts}
