"""Server groups as the API role makes and shows them: rules, quota, members and their domains.

The group and its members are the API database's
(``cellplane.objects.server_groups``); where a member runs is its cell's,
and which domain that host is in at the group's level is the failure
domains' (``cellplane.objects.failure_domains``). A member in ERROR or
deleted holds no domain, so none is shown for it.

``create`` is what both doors (``cellplane server group create``, ``POST
/os-server-groups``) call: the group's quota is asked before the group is
written and asked again after (``GroupQuota``, as Nova's ``recheck_quota``:
of concurrent creates none ends over the limit). Compute API rules
(microversion 2.64) map to a group's level and bound (``from_rules``,
``rules_of``):

- ``max_server_per_host`` (Nova's): anti-affinity members one host may hold;
- ``failure_domain``: the level, ``host`` or a failure-domain level the
  scheduler recorded (``rack``...); ``host`` when absent;
- ``max_server_per_domain``: anti-affinity members one domain of that level
  may hold (1 when absent).
"""
from __future__ import annotations

import dataclasses
from typing import Mapping, Protocol

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.objects import failure_domains, server_groups
from cellplane_api import servers
from cellplane_api.conf import DEFAULT_CELL_TIMEOUT
from cellplane_api.quotas import QuotaExceeded
from rpc_schemas.request_spec import ANTI_AFFINITY, HOST_LEVEL, SOFT_ANTI_AFFINITY


@dataclasses.dataclass(frozen=True)
class MemberView:
    uuid: str
    name: str | None
    status: str
    host: str | None
    # The name of its domain at the group's level (the host at ``host``);
    # None while it runs nowhere, is in ERROR, or its host is in no domain.
    domain: str | None


def domain_names(api_engine: Engine, level: str) -> dict[str, str]:
    """Host -> the name of its domain at ``level`` (the host itself at ``host``)."""
    if level == HOST_LEVEL:
        return {}
    return {host: domain.name for domain in failure_domains.list_all(api_engine, level=level)
            for host in domain.hosts}


def member_views(api_engine: Engine, cells: CellDatabases, group: server_groups.ServerGroup,
                 *, cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> list[MemberView]:
    """The group's members in the order they joined."""
    if not group.members:
        return []
    found = {s.uuid: s for s in servers.list_servers(
        api_engine, cells, group.members, include_deleted=True, cell_timeout=cell_timeout)}
    names = domain_names(api_engine, group.level)
    views = []
    for uuid in group.members:
        server = found.get(uuid)
        if server is None:
            views.append(MemberView(uuid, None, servers.DELETED, None, None))
            continue
        holds = server.host is not None and server.status not in (servers.ERROR,
                                                                  servers.DELETED)
        domain = None
        if holds:
            domain = (server.host if group.level == HOST_LEVEL
                      else names.get(server.host))
        views.append(MemberView(uuid, server.name, server.status, server.host, domain))
    return views


RULE_MAX_PER_HOST = 'max_server_per_host'
RULE_FAILURE_DOMAIN = 'failure_domain'
RULE_MAX_PER_DOMAIN = 'max_server_per_domain'
RULES = (RULE_MAX_PER_HOST, RULE_FAILURE_DOMAIN, RULE_MAX_PER_DOMAIN)
_ANTI = (ANTI_AFFINITY, SOFT_ANTI_AFFINITY)


class RuleError(server_groups.ServerGroupError):
    """A rule that cannot be followed; ``rule`` is its name."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


class GroupQuota(Protocol):
    """What ``create`` asks before and after writing a group (the quota driver's seam).

    ``check`` raises ``QuotaExceeded`` when ``project_id`` would hold more
    groups than allowed with ``delta`` more than it holds now (``delta`` 0:
    the recheck after writing, which counts the new group). The ``[quota]``
    driver, ``cellplane_api.quotas.DatabaseQuotas``, is one; ``QuotaExceeded``
    is that module's, the one exception of every quota refusal.
    """

    def check(self, project_id: str, user_id: str | None, delta: int) -> None: ...


class Unlimited:
    """No quota on server groups: what runs until a quota driver is given."""

    def check(self, project_id: str, user_id: str | None, delta: int) -> None:
        return None


UNLIMITED = Unlimited()


# The column holding the bound is a 32-bit integer.
MAX_BOUND = 2 ** 31 - 1


def _count(rule: str, value) -> int:
    # Nova's positive_integer: an integer, or a string of digits (the clients send strings).
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (
            isinstance(value, str) and not value.isdigit()) or not 1 <= int(value) <= MAX_BOUND:
        raise RuleError(rule, f'rule {rule} must be a whole number from 1 to {MAX_BOUND}, '
                              f'not {value!r}')
    return int(value)


def from_rules(policy: str, rules: Mapping[str, object]) -> tuple[str, int | None]:
    """(level, max_per_domain) that ``rules`` ask of a group with ``policy``; RuleError names the rule."""
    for name in rules:
        if name not in RULES:
            raise RuleError(name, f'unknown rule {name!r} (the rules are '
                                  f'{", ".join(RULES)})')
    level = rules.get(RULE_FAILURE_DOMAIN, HOST_LEVEL)
    if not isinstance(level, str) or not level.strip():
        raise RuleError(RULE_FAILURE_DOMAIN, f'rule {RULE_FAILURE_DOMAIN} must name a '
                                             f'level, not {level!r}')
    bound = None
    for name in (RULE_MAX_PER_HOST, RULE_MAX_PER_DOMAIN):
        if name not in rules:
            continue
        if policy not in _ANTI:
            raise RuleError(name, f'rule {name} is for anti-affinity policies, not {policy}')
        if name == RULE_MAX_PER_HOST and level != HOST_LEVEL:
            raise RuleError(name, f'rule {name} bounds members per host; with '
                                  f'{RULE_FAILURE_DOMAIN}={level} use {RULE_MAX_PER_DOMAIN}')
        if bound is not None:
            raise RuleError(name, f'rules {RULE_MAX_PER_HOST} and {RULE_MAX_PER_DOMAIN} '
                                  f'say the same thing: give one')
        bound = _count(name, rules[name])
    return level, bound


def rules_of(group: server_groups.ServerGroup) -> dict:
    """The rules that describe ``group`` (``{}`` for a plain group at the host level)."""
    rules: dict = {}
    if group.level != HOST_LEVEL:
        rules[RULE_FAILURE_DOMAIN] = group.level
    if group.anti and group.max_per_domain != 1:
        rules[RULE_MAX_PER_HOST if group.level == HOST_LEVEL
              else RULE_MAX_PER_DOMAIN] = group.max_per_domain
    return rules


def create(api_engine: Engine, *, project_id: str, user_id: str | None, name: str,
           policy: str, level: str = HOST_LEVEL, max_per_domain: int | None = None,
           quota: GroupQuota = UNLIMITED) -> server_groups.ServerGroup:
    """A new group, within ``quota`` (asked before writing, and again after: over it, the group is removed).

    Refused (``ServerGroupError``: ``UnknownLevel``, ``MaxPerDomainError``,
    ``GroupExists``; or ``QuotaExceeded``) with nothing left written.
    """
    quota.check(project_id, user_id, 1)
    group = server_groups.create(api_engine, project_id=project_id, user_id=user_id,
                                 name=name, policy=policy, level=level,
                                 max_per_domain=max_per_domain)
    try:
        quota.check(project_id, user_id, 0)
    except QuotaExceeded:
        server_groups.delete(api_engine, group.uuid)
        raise
    return group
