"""Placement's policy rules and defaults, one module per resource.

``list_rules()`` is every rule, in the reference's order (the
``oslo.policy.policies`` entry point, so ``oslopolicy-sample-generator
--namespace placement`` writes the sample policy file).
"""
from __future__ import annotations

from oslo_policy import policy

from placement.policies import (
    aggregate,
    allocation,
    allocation_candidate,
    base,
    inventory,
    reshaper,
    resource_class,
    resource_provider,
    trait,
    usage,
)

_MODULES = (base, resource_provider, resource_class, inventory, aggregate, usage,
            trait, allocation, allocation_candidate, reshaper)


def list_rules() -> list[policy.RuleDefault]:
    return [rule for module in _MODULES for rule in module.rules]
