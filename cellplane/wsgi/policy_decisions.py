"""Policy decisions remembered for a second: oslo.policy asked once per rule, caller and target.

    decisions = Decisions(ttl=1.0)
    allowed = decisions.decide(rule, credentials, target, lambda: enforcer.enforce(...))

oslo.policy looks for its policy files (searching the configuration
directories) and inspects every check's signature on each enforce: about
0.1 ms per question, a tenth of a compute API create's CPU and more of a
list's, which asks several rules. A service asks the same question with the
same credentials thousands of times a minute. A changed policy file still
takes effect within ``ttl`` seconds (0: every question goes to oslo.policy).
Placement and the compute API share this.
"""
from __future__ import annotations

import time
from typing import Callable

from oslo_context import context as oslo_context

# How long a decision is remembered, and how many are (all are forgotten past that).
DECISION_TTL = 1.0
MAX_DECISIONS = 4096


class Decisions:
    """(rule, credentials, target) -> allowed, each for ``ttl`` seconds. Thread-safe enough:
    a race only asks oslo.policy twice."""

    def __init__(self, ttl: float = DECISION_TTL, size: int = MAX_DECISIONS):
        self._ttl = ttl
        self._size = size
        self._known: dict[tuple, tuple[bool, float]] = {}

    def decide(self, rule: str, credentials: oslo_context.RequestContext, target: dict,
               ask: Callable[[], object]) -> bool:
        """The remembered answer, else ``bool(ask())`` remembered."""
        key = (rule, credentials_key(credentials), frozen(target))
        now = time.monotonic()
        known = self._known.get(key)
        if known is not None and known[1] > now:
            return known[0]
        allowed = bool(ask())
        if len(self._known) >= self._size:
            self._known.clear()
        self._known[key] = (allowed, now + self._ttl)
        return allowed


def credentials_key(credentials: oslo_context.RequestContext) -> tuple:
    """The caller as the policy sees it (``to_policy_values``), hashable; made once per caller.

    Kept on the credentials: a request's caller, made by the service from
    its identity headers, is not changed afterwards, and a request asks
    several rules (a create two, a list eight). With the identity of the
    object it was made for: a copy (``elevated()``, ``copy.copy``) carries
    the attribute along, and may differ (an admin role added), so it makes
    its own.
    """
    kept = getattr(credentials, _KEY_ATTRIBUTE, None)
    if kept is not None and kept[0] == id(credentials):
        return kept[1]
    key = frozen(credentials.to_policy_values())
    setattr(credentials, _KEY_ATTRIBUTE, (id(credentials), key))
    return key


_KEY_ATTRIBUTE = '_cellplane_policy_key'


def frozen(values) -> tuple:
    """A hashable copy of a flat mapping whose values are scalars or lists."""
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                        for k, v in values.items()))
