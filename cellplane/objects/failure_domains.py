"""Failure domains in the API DB: the levels, the domains, what each is made of and every host of each.

Seed 004: operators describe racks, rows, rooms (level names of their own)
as Placement aggregates. Here a level is one of the names the scheduler was
started with (``[scheduler] failure_domain_levels``, smallest first;
``host`` is below them all and never recorded), a domain is one named
member of a level, and its uuid is its Placement aggregate. This module
keeps the API database's side; ``cellplane_api.failure_domains`` keeps
Placement's in step.

What this module promises:

- a domain is found by ``LEVEL:NAME`` or by its uuid; (level, name) is unique;
- a domain's level is one of the recorded levels (``UnknownLevel`` otherwise),
  and the levels cannot be recorded again without a level that domains use,
  or in an order that puts a domain below one it contains (``LevelsInUse``);
- a domain contains only domains of a smaller level, and a domain is in at
  most one domain of each level;
- a domain's hosts are its own plus every host of the domains it contains,
  kept so when a contained domain gains or loses a host;
- a host is in at most one domain per level, whether named directly or
  through a contained domain: the refusal names the host and both domains,
  and the database's unique (level, host) keeps it so under concurrent
  writers;
- only hosts mapped to a cell are accepted (the scheduler maps those it
  reads; ``cellplane-manage cell discover-hosts``): nothing is guessed;
- a domain can gain and lose contained domains later (``add_domains``,
  ``remove_domains``) under the same rules;
- a domain cannot be deleted while it has hosts of its own or is contained
  in another (remove the hosts, take it out of the container first);
- every write says which hosts' set of domains changed, so that their
  resource providers' Placement aggregates can follow.

Every write takes the level rows ``FOR UPDATE`` first, so that writers
(the CLI, a scheduler recording its levels) run one at a time on
PostgreSQL; SQLite serializes writers itself.
"""
from __future__ import annotations

import re
import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import (failure_domain_contents, failure_domain_hosts,
                                     failure_domain_levels, failure_domains)
from cellplane.objects import change_stamps, host_mappings

from rpc_schemas.request_spec import HOST_LEVEL  # one name for the host level: the wire contract's
MAX_NAME_LENGTH = 255
_LEVEL_NAME = re.compile(r'^[A-Za-z0-9_.-]{1,64}$')


class FailureDomainError(Exception):
    """A failure-domain request an operator must correct."""


class UnknownLevel(FailureDomainError):
    """The level is not one the scheduler was started with."""


class DomainNotFound(FailureDomainError):
    """No domain has this LEVEL:NAME or uuid."""


class HostConflict(FailureDomainError):
    """The request would put a host in two domains of one level."""


class DomainInUse(FailureDomainError):
    """The domain has hosts of its own, or is contained in another."""


class LevelsInUse(FailureDomainError):
    """New levels that existing domains do not fit."""


@dataclass(frozen=True)
class FailureDomain:
    uuid: str
    level: str
    name: str
    hosts: tuple[str, ...] = ()          # every host: its own and its contained domains'
    own_hosts: tuple[str, ...] = ()
    contains: tuple[str, ...] = ()       # LEVEL:NAME of the domains it is made of
    contained_in: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f'{self.level}:{self.name}'


@dataclass(frozen=True)
class Change:
    """What a write did: the domain as it is now, and the hosts whose domains changed."""

    domain: FailureDomain
    hosts_changed: tuple[str, ...]


def check_level_names(levels: Sequence[str]) -> list[str]:
    """``levels`` stripped and checked: names of letters, digits, ``_.-``, none twice, not ``host``."""
    names = [level.strip() for level in levels]
    for name in names:
        if not _LEVEL_NAME.match(name):
            raise FailureDomainError(
                f'failure-domain level {name!r}: use 1 to 64 letters, digits, "_", "." '
                f'or "-"')
        if name == HOST_LEVEL:
            raise FailureDomainError(
                f'failure-domain level {HOST_LEVEL!r} always exists below the others; '
                f'do not name it')
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise FailureDomainError(f'failure-domain level(s) named twice: {", ".join(twice)}')
    return names


# -- the state of every domain, read and written in one transaction ------------

@dataclass
class _State:
    levels: list[str]
    domains: dict[int, tuple[str, str, str]]              # id -> (uuid, level, name)
    own: dict[int, set[str]] = field(default_factory=dict)
    contents: dict[int, set[int]] = field(default_factory=dict)
    stored: dict[tuple[str, str], tuple[int, bool]] = field(default_factory=dict)

    def label(self, domain_id: int) -> str:
        _, level, name = self.domains[domain_id]
        return f'{level}:{name}'

    def level_of(self, domain_id: int) -> str:
        return self.domains[domain_id][1]

    def rank(self, level: str) -> int:
        return self.levels.index(level)

    def containers(self, domain_id: int) -> list[int]:
        return sorted(d for d, members in self.contents.items() if domain_id in members)

    def effective(self) -> dict[int, set[str]]:
        """Domain id -> every host of it: its own and those of the domains it contains."""
        found: dict[int, set[str]] = {}

        def hosts_of(domain_id: int) -> set[str]:
            if domain_id not in found:
                hosts = set(self.own.get(domain_id, ()))
                # Contents are of smaller levels only, so this ends.
                for member in self.contents.get(domain_id, ()):
                    hosts |= hosts_of(member)
                found[domain_id] = hosts
            return found[domain_id]
        for domain_id in self.domains:
            hosts_of(domain_id)
        return found

    def via(self, domain_id: int, host: str) -> str:
        """How ``host`` is in the domain: '' if its own, else ' (through LEVEL:NAME)'."""
        if host in self.own.get(domain_id, ()):
            return ''
        effective = self.effective()
        for member in sorted(self.contents.get(domain_id, ())):
            if host in effective[member]:
                return f' (through {self.label(member)}{self.via(member, host)})'
        return ''

    def view(self, domain_id: int, effective: dict[int, set[str]]) -> FailureDomain:
        uuid, level, name = self.domains[domain_id]
        return FailureDomain(
            uuid=uuid, level=level, name=name,
            hosts=tuple(sorted(effective.get(domain_id, ()))),
            own_hosts=tuple(sorted(self.own.get(domain_id, ()))),
            contains=tuple(sorted(self.label(m) for m in self.contents.get(domain_id, ()))),
            contained_in=tuple(self.label(c) for c in self.containers(domain_id)))


def _levels(conn: Connection, *, lock: bool = False) -> list[str]:
    query = sa.select(failure_domain_levels.c.name).order_by(failure_domain_levels.c.position)
    if lock:
        query = query.with_for_update()
    return list(conn.execute(query).scalars())


def _load(conn: Connection, *, lock: bool = False) -> _State:
    state = _State(levels=_levels(conn, lock=lock), domains={
        row.id: (row.uuid, row.level, row.name)
        for row in conn.execute(sa.select(failure_domains))})
    for row in conn.execute(sa.select(failure_domain_contents)):
        state.contents.setdefault(row.domain_id, set()).add(row.member_id)
    for row in conn.execute(sa.select(failure_domain_hosts)):
        state.stored[(row.level, row.host)] = (row.domain_id, bool(row.direct))
        if row.direct:
            state.own.setdefault(row.domain_id, set()).add(row.host)
    return state


def _find(state: _State, ref: str) -> int:
    for domain_id, (uuid, level, name) in state.domains.items():
        if ref == uuid or ref == f'{level}:{name}':
            return domain_id
    raise DomainNotFound(f'no failure domain {ref!r} (give LEVEL:NAME or its uuid); see '
                         f'`cellplane failure-domain list`')


def _unknown_level(level: str, levels: Sequence[str]) -> UnknownLevel:
    if not levels:
        return UnknownLevel(
            f'no failure-domain levels are recorded, so {level!r} is unknown: set '
            f'[scheduler] failure_domain_levels (e.g. rack,row,room) and restart the '
            f'scheduler, or run `cellplane-manage failure-domain record-levels`')
    return UnknownLevel(f'unknown failure-domain level {level!r}; the scheduler uses '
                        f'{", ".join(levels)} ([scheduler] failure_domain_levels)')


def _check_hosts_mapped(conn: Connection, hosts: Iterable[str]) -> None:
    for host in hosts:
        if not host:
            raise FailureDomainError('a host name must not be empty')
        if not host_mappings.is_mapped(conn, host):
            raise FailureDomainError(
                f'no compute host {host!r} is mapped to a cell (the scheduler maps the '
                f'hosts it reads; `cellplane-manage cell discover-hosts` maps new ones '
                f'now)')


def _write(conn: Connection, state: _State, *, subject: int) -> Change:
    """Store the hosts of every domain as ``state`` now has them; refuse a host in two domains of a level."""
    effective = state.effective()
    wanted: dict[tuple[str, str], tuple[int, bool]] = {}
    for domain_id in sorted(effective):
        level = state.level_of(domain_id)
        for host in sorted(effective[domain_id]):
            taken = wanted.get((level, host))
            if taken is not None:
                first, second = sorted((taken[0], domain_id), key=state.label)
                raise HostConflict(
                    f'host {host} would be in {state.label(first)}{state.via(first, host)} '
                    f'and in {state.label(second)}{state.via(second, host)}; a host is in '
                    f'at most one {level}')
            wanted[(level, host)] = (domain_id, host in state.own.get(domain_id, ()))
    gone = [key for key, value in state.stored.items() if wanted.get(key) != value]
    for level, host in gone:
        conn.execute(failure_domain_hosts.delete().where(
            failure_domain_hosts.c.level == level, failure_domain_hosts.c.host == host))
    new = [{'domain_id': d, 'level': level, 'host': host, 'direct': direct}
           for (level, host), (d, direct) in wanted.items()
           if state.stored.get((level, host)) != (d, direct)]
    if new:
        try:
            conn.execute(failure_domain_hosts.insert(), new)
        except sa.exc.IntegrityError as exc:
            raise HostConflict('another change to the failure domains was made at the same '
                               'time; run the command again') from exc

    def by_host(rows: dict[tuple[str, str], tuple[int, bool]]) -> dict[str, set[int]]:
        found: dict[str, set[int]] = {}
        for (_, host), (domain_id, _) in rows.items():
            found.setdefault(host, set()).add(domain_id)
        return found
    before, after = by_host(state.stored), by_host(wanted)
    changed = tuple(sorted(h for h in set(before) | set(after)
                           if before.get(h) != after.get(h)))
    if changed:
        change_stamps.bump(conn)
    return Change(domain=state.view(subject, effective), hosts_changed=changed)


# -- levels -----------------------------------------------------------------

def levels(engine: Engine) -> list[str]:
    """The recorded levels, smallest first (empty until a scheduler or the operator records them)."""
    with engine.connect() as conn:
        return _levels(conn)


def record_levels(engine: Engine, wanted: Sequence[str]) -> bool:
    """Record ``wanted`` as the levels, smallest first; True if they changed.

    ``LevelsInUse`` when a domain is of a level left out, or contains a
    domain the new order does not put below it; nothing is changed then.
    """
    names = check_level_names(wanted)
    with engine.begin() as conn:
        state = _load(conn, lock=True)
        if state.levels == names:
            return False
        used = sorted({level for _, level, _ in state.domains.values()} - set(names))
        if used:
            raise LevelsInUse(
                f'failure-domain level(s) {", ".join(used)} have domains but are not in '
                f'[scheduler] failure_domain_levels ({", ".join(names) or "empty"}); add '
                f'them back, or delete those domains first')
        state.levels = names
        for container, members in sorted(state.contents.items()):
            for member in sorted(members):
                if state.rank(state.level_of(member)) >= state.rank(state.level_of(container)):
                    raise LevelsInUse(
                        f'{state.label(container)} contains {state.label(member)}, but '
                        f'[scheduler] failure_domain_levels ({", ".join(names)}) does not '
                        f'put {state.level_of(member)} below {state.level_of(container)}')
        conn.execute(failure_domain_levels.delete())
        if names:
            conn.execute(failure_domain_levels.insert(),
                         [{'name': n, 'position': i} for i, n in enumerate(names)])
    return True


# -- reads --------------------------------------------------------------------

def get(engine: Engine, ref: str) -> FailureDomain:
    """The domain ``LEVEL:NAME`` or uuid ``ref``."""
    with engine.connect() as conn:
        state = _load(conn)
    return state.view(_find(state, ref), state.effective())


def list_all(engine: Engine, *, level: str | None = None) -> list[FailureDomain]:
    """Every domain (of ``level``), smallest level first, then by name."""
    with engine.connect() as conn:
        state = _load(conn)
    if level is not None and level not in state.levels:
        raise _unknown_level(level, state.levels)
    effective = state.effective()
    order = {name: i for i, name in enumerate(state.levels)}
    found = [state.view(d, effective) for d in state.domains
             if level is None or state.level_of(d) == level]
    return sorted(found, key=lambda d: (order.get(d.level, len(order)), d.level, d.name))


def domain_uuids(engine: Engine) -> set[str]:
    """The Placement aggregate of every domain."""
    with engine.connect() as conn:
        return set(conn.execute(sa.select(failure_domains.c.uuid)).scalars())


def host_domains(engine: Engine) -> dict[str, dict[str, str]]:
    """Host -> level -> the uuid of its domain at that level, for every host in a domain (one query).

    Raises ``sqlalchemy.exc.SQLAlchemyError`` when the API database cannot be read.
    """
    query = (sa.select(failure_domain_hosts.c.host, failure_domain_hosts.c.level,
                       failure_domains.c.uuid)
             .select_from(failure_domain_hosts.join(
                 failure_domains, failure_domains.c.id == failure_domain_hosts.c.domain_id))
             .order_by(failure_domain_hosts.c.host, failure_domain_hosts.c.level))
    found: dict[str, dict[str, str]] = {}
    with engine.connect() as conn:
        for row in conn.execute(query):
            found.setdefault(row.host, {})[row.level] = row.uuid
    return found


# -- writes -------------------------------------------------------------------

def parse_ref(text: str) -> tuple[str, str]:
    """``LEVEL:NAME`` -> (level, name); FailureDomainError if either is missing."""
    level, sep, name = text.partition(':')
    if not sep or not level or not name:
        raise FailureDomainError(f'expected LEVEL:NAME, got {text!r}')
    return level, name


def create(engine: Engine, level: str, name: str, *, hosts: Iterable[str] = (),
           contains: Iterable[str] = ()) -> Change:
    """A new domain at ``level`` with ``hosts`` of its own and made of the ``contains`` domains."""
    if not name or len(name) > MAX_NAME_LENGTH:
        raise FailureDomainError(f'a failure-domain name must be 1 to {MAX_NAME_LENGTH} '
                                 f'characters')
    hosts = sorted(set(hosts))
    with engine.begin() as conn:
        state = _load(conn, lock=True)
        if level not in state.levels:
            raise _unknown_level(level, state.levels)
        if any((lvl, nm) == (level, name) for _, lvl, nm in state.domains.values()):
            raise FailureDomainError(f'failure domain {level}:{name} exists')
        _check_hosts_mapped(conn, hosts)
        members = {_checked_member(state, level, f'{level}:{name}', ref) for ref in contains}
        domain_id = conn.execute(failure_domains.insert().values(
            uuid=str(uuidlib.uuid4()), level=level, name=name)).inserted_primary_key[0]
        row = conn.execute(sa.select(failure_domains).where(
            failure_domains.c.id == domain_id)).one()
        state.domains[domain_id] = (row.uuid, level, name)
        state.own[domain_id] = set(hosts)
        state.contents[domain_id] = members
        if members:
            conn.execute(failure_domain_contents.insert(),
                         [{'domain_id': domain_id, 'member_id': m} for m in sorted(members)])
        return _write(conn, state, subject=domain_id)


def _checked_member(state: _State, level: str, label: str, ref: str) -> int:
    """The domain ``ref``, if a domain ``label`` at ``level`` may be made of it."""
    member = _find(state, ref)
    if state.rank(state.level_of(member)) >= state.rank(level):
        raise FailureDomainError(
            f'{label} cannot contain {state.label(member)}: a {level} is made of smaller '
            f'levels only (smallest first: {", ".join(state.levels)})')
    for container in state.containers(member):
        if state.level_of(container) == level:
            raise FailureDomainError(
                f'{state.label(member)} is already in {state.label(container)}; a domain '
                f'is in at most one {level}')
    return member


def add_domains(engine: Engine, ref: str, contains: Iterable[str]) -> Change:
    """Make the domain contain these smaller domains too: their hosts become its own."""
    with engine.begin() as conn:
        state = _load(conn, lock=True)
        domain_id = _find(state, ref)
        level, label = state.level_of(domain_id), state.label(domain_id)
        members = {_checked_member(state, level, label, m) for m in contains}
        state.contents.setdefault(domain_id, set()).update(members)
        change = _write(conn, state, subject=domain_id)
        conn.execute(failure_domain_contents.insert(),
                     [{'domain_id': domain_id, 'member_id': m} for m in sorted(members)])
        return change


def remove_domains(engine: Engine, ref: str, contained: Iterable[str]) -> Change:
    """Stop the domain containing these domains: their hosts leave it (unless its own)."""
    with engine.begin() as conn:
        state = _load(conn, lock=True)
        domain_id = _find(state, ref)
        members = {_find(state, m) for m in contained}
        missing = sorted(state.label(m) for m in members
                         if m not in state.contents.get(domain_id, ()))
        if missing:
            raise FailureDomainError(f'{state.label(domain_id)} does not contain '
                                     f'{", ".join(missing)}')
        state.contents[domain_id] -= members
        conn.execute(failure_domain_contents.delete().where(
            failure_domain_contents.c.domain_id == domain_id,
            failure_domain_contents.c.member_id.in_(sorted(members))))
        return _write(conn, state, subject=domain_id)


def add_hosts(engine: Engine, ref: str, hosts: Iterable[str]) -> Change:
    """Give the domain these hosts of its own (and so every domain that contains it)."""
    hosts = sorted(set(hosts))
    with engine.begin() as conn:
        state = _load(conn, lock=True)
        domain_id = _find(state, ref)
        _check_hosts_mapped(conn, hosts)
        own = state.own.setdefault(domain_id, set())
        already = [h for h in hosts if h in own]
        if already:
            raise FailureDomainError(f'host(s) {", ".join(already)} already in '
                                     f'{state.label(domain_id)}')
        own.update(hosts)
        return _write(conn, state, subject=domain_id)


def remove_hosts(engine: Engine, ref: str, hosts: Iterable[str]) -> Change:
    """Take hosts of its own out of the domain (and out of the domains that contain it)."""
    hosts = sorted(set(hosts))
    with engine.begin() as conn:
        state = _load(conn, lock=True)
        domain_id = _find(state, ref)
        own = state.own.setdefault(domain_id, set())
        missing = [h for h in hosts if h not in own]
        if missing:
            effective = state.effective()[domain_id]
            through = [f'{h}{state.via(domain_id, h)}' for h in missing if h in effective]
            hint = (f'; {", ".join(through)}: remove it from that domain' if through else '')
            raise FailureDomainError(f'host(s) {", ".join(missing)} not among the own hosts '
                                     f'of {state.label(domain_id)}{hint}')
        own.difference_update(hosts)
        return _write(conn, state, subject=domain_id)


def check_deletable(engine: Engine, ref: str) -> FailureDomain:
    """The domain, if ``delete`` would take it; DomainInUse otherwise."""
    with engine.connect() as conn:
        state = _load(conn)
    domain_id = _find(state, ref)
    _refuse_in_use(state, domain_id)
    return state.view(domain_id, state.effective())


def _refuse_in_use(state: _State, domain_id: int) -> None:
    label = state.label(domain_id)
    containers = [state.label(c) for c in state.containers(domain_id)]
    if containers:
        raise DomainInUse(
            f'{label} is part of {", ".join(containers)}, whose hosts would change; take '
            f'it out first (`cellplane failure-domain remove-domain {containers[0]} '
            f'{label}`)')
    own = sorted(state.own.get(domain_id, ()))
    if own:
        raise DomainInUse(f'{label} still has host(s) {", ".join(own)}; remove them first '
                          f'(`cellplane failure-domain remove-host {label} HOST ...`)')


def delete(engine: Engine, ref: str) -> Change:
    """Delete the domain (its contents stay, as domains of their own); DomainInUse when in use.

    ``Change.domain`` is the domain as it was; ``hosts_changed`` its hosts.
    """
    with engine.begin() as conn:
        state = _load(conn, lock=True)
        domain_id = _find(state, ref)
        _refuse_in_use(state, domain_id)
        before = state.view(domain_id, state.effective())
        conn.execute(failure_domain_hosts.delete().where(
            failure_domain_hosts.c.domain_id == domain_id))
        conn.execute(failure_domain_contents.delete().where(
            failure_domain_contents.c.domain_id == domain_id))
        conn.execute(failure_domains.delete().where(failure_domains.c.id == domain_id))
        change_stamps.bump(conn)
    return Change(domain=before, hosts_changed=before.hosts)
