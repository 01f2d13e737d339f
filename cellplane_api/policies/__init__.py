"""Every policy rule of the compute API, with Nova's names and defaults (``list_rules``)."""
from __future__ import annotations

import itertools

from cellplane_api.policies import (
    aggregates,
    availability_zone,
    base,
    flavors,
    hypervisors,
    images,
    instance_actions,
    migrations,
    quota_sets,
    scheduling_records,
    server_actions,
    server_groups,
    servers,
    simple_tenant_usage,
)
from cellplane_api.policies import services as compute_services


def list_rules():
    return list(itertools.chain(base.rules, flavors.rules, servers.rules, server_groups.rules,
                                instance_actions.rules, scheduling_records.rules,
                                compute_services.rules, hypervisors.rules, availability_zone.rules,
                                aggregates.rules, quota_sets.rules, server_actions.rules,
                                images.rules, migrations.rules,
                                simple_tenant_usage.rules))
