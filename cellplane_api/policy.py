"""Authorization for the compute API: oslo.policy's Enforcer with Nova's rules (``cellplane_api.policies``).

    enforcer = PolicyEnforcer(conf)                 # reads [oslo_policy]
    enforcer.authorize(rule, credentials, target)   # or Nova's 403
    enforcer.allowed(rule, credentials, target)     # True or False

Handlers name the rule and its target (the server's project), as Nova's do.
A decision is remembered for ``decision_ttl`` seconds (one second;
``cellplane.wsgi.policy_decisions``, as Placement's): a list asks several
rules, and oslo.policy looks for its files on every question. A changed
policy file takes effect within that.
"""
from __future__ import annotations

from oslo_config import cfg
from oslo_context import context as oslo_context
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

from cellplane.wsgi import policy_decisions
from cellplane_api import errors, policies


def make_oslo_enforcer(conf: cfg.ConfigOpts) -> oslo_policy.Enforcer:
    policy_opts.set_defaults(conf)
    enforcer = oslo_policy.Enforcer(conf)
    enforcer.register_defaults(policies.list_rules())
    return enforcer


def get_enforcer():
    """For ``oslopolicy-*`` (entry point ``oslo.policy.enforcer``): the defaults, no config file."""
    conf = cfg.ConfigOpts()
    conf([], project='cellplane', default_config_files=[], default_config_dirs=[])
    return make_oslo_enforcer(conf)


class PolicyEnforcer:
    def __init__(self, conf: cfg.ConfigOpts, *,
                 decision_ttl: float = policy_decisions.DECISION_TTL):
        self.enforcer = make_oslo_enforcer(conf)
        self._decisions = policy_decisions.Decisions(decision_ttl)

    def allowed(self, rule: str, credentials: oslo_context.RequestContext,
                target: dict | None = None) -> bool:
        if target is None:
            target = {'project_id': credentials.project_id, 'user_id': credentials.user_id}
        return self._decisions.decide(rule, credentials, target,
                                      lambda: self.enforcer.enforce(rule, target, credentials))

    def authorize(self, rule: str, credentials: oslo_context.RequestContext,
                  target: dict | None = None) -> None:
        if not self.allowed(rule, credentials, target):
            raise errors.Forbidden(f'Policy doesn\'t allow {rule} to be performed.')
