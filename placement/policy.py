"""Authorization: which policy rule guards each route, and the check itself.

    enforcer = PolicyEnforcer(conf)       # reads [oslo_policy]
    enforcer.authorize('GET', '/resource_providers', credentials)   # or 403

The rules and defaults are ``placement.policies``'; a rule's documented
operations (method and path template) say which route it guards, so the
route table and the policies cannot drift apart silently (a test checks
that every route but ``/`` has exactly one rule). ``[oslo_policy]
policy_file`` overrides rules and is re-read when it changes;
``enforce_new_defaults = false`` also accepts each rule's deprecated
default (``role:admin``). The target of a check is the caller's own
project and user, as in the reference, unless the handler names another
with ``@policy_target`` (``GET /usages``: the project asked about).
"""
from __future__ import annotations

import copy
from typing import Any, Callable

from oslo_config import cfg
from oslo_context import context as oslo_context
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

from cellplane.wsgi import policy_decisions
from placement import errors, policies


def rules_by_route(rules) -> dict[tuple[str, str], str]:
    """``{(method, path template): rule name}`` from the rules' documented operations."""
    found: dict[tuple[str, str], str] = {}
    for rule in rules:
        for operation in getattr(rule, 'operations', ()):
            found[(operation['method'], operation['path'])] = rule.name
    return found


# How long a decision is remembered (``cellplane.wsgi.policy_decisions``):
# a changed policy file still takes effect within this.
DECISION_TTL = policy_decisions.DECISION_TTL


class PolicyEnforcer:
    """oslo.policy's Enforcer with Placement's defaults, asked by route."""

    def __init__(self, conf: cfg.ConfigOpts, *, decision_ttl: float = DECISION_TTL):
        self.enforcer = make_oslo_enforcer(conf)
        self._rules = rules_by_route(policies.list_rules())
        self._decisions = policy_decisions.Decisions(decision_ttl)

    def rule_for(self, method: str, template: str) -> str | None:
        """The rule guarding ``method`` on the route ``template``; None: open (``/``)."""
        return self._rules.get((method, template))

    def authorize(self, method: str, template: str,
                  credentials: oslo_context.RequestContext,
                  target: dict | None = None) -> None:
        """Return if the policy allows the call; raise 403 (as the reference words it) if not."""
        rule = self.rule_for(method, template)
        if rule is None:
            return
        if target is None:
            target = {'project_id': credentials.project_id,
                      'user_id': credentials.user_id}
        if not self._allowed(rule, target, credentials):
            raise errors.Forbidden(f'Policy does not allow {rule} to be performed.')

    def _allowed(self, rule: str, target: dict,
                 credentials: oslo_context.RequestContext) -> bool:
        # do_raise=False: a token of the wrong scope is refused like any
        # other denial, not with oslo.policy's InvalidScope.
        return self._decisions.decide(rule, credentials, target, lambda: self.enforcer.authorize(
            rule, target, credentials, do_raise=False))


def policy_target(target_of: Callable[[Any], dict]):
    """Decorate a handler whose policy target is ``target_of(req)``, not the caller's own project."""
    def decorate(handler):
        handler.policy_target = target_of
        return handler
    return decorate


def make_oslo_enforcer(conf: cfg.ConfigOpts) -> oslo_policy.Enforcer:
    enforcer = oslo_policy.Enforcer(conf)
    # Every default changed with the secure-RBAC rules; saying so for each
    # of them at start-up drowns the log (the reference silences it too).
    enforcer.suppress_default_change_warnings = True
    # oslo.policy rewrites the defaults it is given when it folds in their
    # deprecated rules: each enforcer gets its own copy.
    enforcer.register_defaults(copy.deepcopy(policies.list_rules()))
    enforcer.load_rules()
    return enforcer


def register_opts(conf: cfg.ConfigOpts) -> None:
    """``[oslo_policy]``, with the policy file named ``policy.yaml`` as in the reference."""
    policy_opts.set_defaults(conf, policy_file='policy.yaml')


def get_enforcer() -> oslo_policy.Enforcer:
    """The ``oslo.policy.enforcer`` entry point (oslopolicy-policy-generator,
    oslopolicy-list-redundant, oslopolicy-validator): the tool has parsed
    its command line, ``--config-file`` included, into ``cfg.CONF``."""
    register_opts(cfg.CONF)
    return make_oslo_enforcer(cfg.CONF)
