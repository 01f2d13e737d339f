"""Failure domains in the API DB: the domains, what each is made of and every host of each.

Seed 004: operators describe racks, rows, rooms (level names of their own)
as Placement aggregates. Here a level is one of the names the scheduler was
started with (``[scheduler] failure_domain_levels``, smallest first;
``host`` is below them all and never recorded), a domain is one named
member of a level, and its uuid is its Placement aggregate. This module
keeps the API database's side; ``cellplane_api.failure_domains`` keeps
Placement's in step. The levels' table is ``failure_domain_levels``; the
rules below are checked on every domain read into a ``DomainGraph``
(``failure_domain_graph``, no I/O), and its errors carry the domains and
hosts they are about (the CLI says how to repair them).

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
from dataclasses import dataclass
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import failure_domain_contents, failure_domain_hosts, failure_domains
from cellplane.objects import change_stamps, failure_domain_levels, host_mappings

# The errors this module's functions raise (with the domain they are
# about), and what they return: callers find them here.
from cellplane.objects.failure_domain_graph import (  # noqa: F401
    DomainGraph,
    DomainInUse,
    DomainNotFound,
    FailureDomain,
    FailureDomainError,
    HostConflict,
    HostNotMapped,
    HostRows,
    LevelsInUse,
    UnknownLevel,
    hosts_changed,
)
from rpc_schemas.request_spec import HOST_LEVEL  # one name for the host level: the wire contract's

MAX_NAME_LENGTH = 255
_LEVEL_NAME = re.compile(r'^[A-Za-z0-9_.-]{1,64}$')


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


# -- every domain, read and written in one transaction ------------------------

def _load(conn: Connection, *, lock: bool = False) -> tuple[DomainGraph, HostRows]:
    """Every domain as a graph, and the host rows stored for them."""
    graph = DomainGraph(levels=failure_domain_levels.read(conn, lock=lock), domains={
        row.id: (row.uuid, row.level, row.name)
        for row in conn.execute(sa.select(failure_domains))})
    for row in conn.execute(sa.select(failure_domain_contents)):
        graph.contents.setdefault(row.domain_id, set()).add(row.member_id)
    stored: HostRows = {}
    for row in conn.execute(sa.select(failure_domain_hosts)):
        stored[(row.level, row.host)] = (row.domain_id, bool(row.direct))
        if row.direct:
            graph.own.setdefault(row.domain_id, set()).add(row.host)
    return graph, stored


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
            raise HostNotMapped(host)


def _write(conn: Connection, graph: DomainGraph, stored: HostRows, *, subject: int) -> Change:
    """Store the hosts of every domain as ``graph`` now has them; refuse a host in two domains of a level."""
    wanted = graph.host_rows()
    gone = [key for key, value in stored.items() if wanted.get(key) != value]
    for level, host in gone:
        conn.execute(failure_domain_hosts.delete().where(
            failure_domain_hosts.c.level == level, failure_domain_hosts.c.host == host))
    new = [{'domain_id': d, 'level': level, 'host': host, 'direct': direct}
           for (level, host), (d, direct) in wanted.items()
           if stored.get((level, host)) != (d, direct)]
    if new:
        try:
            conn.execute(failure_domain_hosts.insert(), new)
        except sa.exc.IntegrityError as exc:
            raise HostConflict('another change to the failure domains was made at the same '
                               'time; run the command again') from exc
    changed = hosts_changed(stored, wanted)
    if changed:
        change_stamps.bump(conn)
    return Change(domain=graph.view(subject, graph.effective()), hosts_changed=changed)


# -- levels -----------------------------------------------------------------

def record_levels(engine: Engine, wanted: Sequence[str]) -> bool:
    """Record ``wanted`` as the levels, smallest first; True if they changed.

    ``LevelsInUse`` when a domain is of a level left out, or contains a
    domain the new order does not put below it; nothing is changed then.
    The levels are read with ``failure_domain_levels.levels``.
    """
    names = check_level_names(wanted)
    for attempt in (1, 2):
        try:
            with engine.begin() as conn:
                graph, _ = _load(conn, lock=True)
                if graph.levels == names:
                    return False
                graph.check_levels_fit(names)
                failure_domain_levels.replace(conn, names)
            return True
        except sa.exc.IntegrityError:
            # FOR UPDATE locks no row of an empty table: two schedulers
            # starting at once both insert the first levels and the later
            # one meets the unique names. Read again: they are recorded now.
            if attempt == 2:
                raise
    raise AssertionError('unreachable')


# -- reads --------------------------------------------------------------------

def get(engine: Engine, ref: str) -> FailureDomain:
    """The domain ``LEVEL:NAME`` or uuid ``ref``."""
    with engine.connect() as conn:
        graph, _ = _load(conn)
    return graph.view(graph.find(ref), graph.effective())


def list_all(engine: Engine, *, level: str | None = None) -> list[FailureDomain]:
    """Every domain (of ``level``), smallest level first, then by name."""
    with engine.connect() as conn:
        graph, _ = _load(conn)
    if level is not None and level not in graph.levels:
        raise _unknown_level(level, graph.levels)
    effective = graph.effective()
    order = {name: i for i, name in enumerate(graph.levels)}
    found = [graph.view(d, effective) for d in graph.domains
             if level is None or graph.level_of(d) == level]
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
        graph, stored = _load(conn, lock=True)
        if level not in graph.levels:
            raise _unknown_level(level, graph.levels)
        if any((lvl, nm) == (level, name) for _, lvl, nm in graph.domains.values()):
            raise FailureDomainError(f'failure domain {level}:{name} exists')
        _check_hosts_mapped(conn, hosts)
        members = {graph.checked_member(level, f'{level}:{name}', ref) for ref in contains}
        domain_id = conn.execute(failure_domains.insert().values(
            uuid=str(uuidlib.uuid4()), level=level, name=name)).inserted_primary_key[0]
        row = conn.execute(sa.select(failure_domains).where(
            failure_domains.c.id == domain_id)).one()
        graph.domains[domain_id] = (row.uuid, level, name)
        graph.own[domain_id] = set(hosts)
        graph.contents[domain_id] = members
        if members:
            conn.execute(failure_domain_contents.insert(),
                         [{'domain_id': domain_id, 'member_id': m} for m in sorted(members)])
        return _write(conn, graph, stored, subject=domain_id)


def add_domains(engine: Engine, ref: str, contains: Iterable[str]) -> Change:
    """Make the domain contain these smaller domains too: their hosts become its own."""
    with engine.begin() as conn:
        graph, stored = _load(conn, lock=True)
        domain_id = graph.find(ref)
        level, label = graph.level_of(domain_id), graph.label(domain_id)
        members = {graph.checked_member(level, label, m) for m in contains}
        graph.contents.setdefault(domain_id, set()).update(members)
        change = _write(conn, graph, stored, subject=domain_id)
        conn.execute(failure_domain_contents.insert(),
                     [{'domain_id': domain_id, 'member_id': m} for m in sorted(members)])
        return change


def remove_domains(engine: Engine, ref: str, contained: Iterable[str]) -> Change:
    """Stop the domain containing these domains: their hosts leave it (unless its own)."""
    with engine.begin() as conn:
        graph, stored = _load(conn, lock=True)
        domain_id = graph.find(ref)
        members = {graph.find(m) for m in contained}
        missing = sorted(graph.label(m) for m in members
                         if m not in graph.contents.get(domain_id, ()))
        if missing:
            raise FailureDomainError(f'{graph.label(domain_id)} does not contain '
                                     f'{", ".join(missing)}')
        graph.contents[domain_id] -= members
        conn.execute(failure_domain_contents.delete().where(
            failure_domain_contents.c.domain_id == domain_id,
            failure_domain_contents.c.member_id.in_(sorted(members))))
        return _write(conn, graph, stored, subject=domain_id)


def add_hosts(engine: Engine, ref: str, hosts: Iterable[str]) -> Change:
    """Give the domain these hosts of its own (and so every domain that contains it)."""
    hosts = sorted(set(hosts))
    with engine.begin() as conn:
        graph, stored = _load(conn, lock=True)
        domain_id = graph.find(ref)
        _check_hosts_mapped(conn, hosts)
        own = graph.own.setdefault(domain_id, set())
        already = [h for h in hosts if h in own]
        if already:
            raise FailureDomainError(f'host(s) {", ".join(already)} already in '
                                     f'{graph.label(domain_id)}')
        own.update(hosts)
        return _write(conn, graph, stored, subject=domain_id)


def remove_hosts(engine: Engine, ref: str, hosts: Iterable[str]) -> Change:
    """Take hosts of its own out of the domain (and out of the domains that contain it)."""
    hosts = sorted(set(hosts))
    with engine.begin() as conn:
        graph, stored = _load(conn, lock=True)
        domain_id = graph.find(ref)
        own = graph.own.setdefault(domain_id, set())
        missing = [h for h in hosts if h not in own]
        if missing:
            effective = graph.effective()[domain_id]
            through = [f'{h}{graph.via(domain_id, h)}' for h in missing if h in effective]
            hint = (f'; {", ".join(through)}: remove it from that domain' if through else '')
            raise FailureDomainError(f'host(s) {", ".join(missing)} not among the own hosts '
                                     f'of {graph.label(domain_id)}{hint}')
        own.difference_update(hosts)
        return _write(conn, graph, stored, subject=domain_id)


def check_deletable(engine: Engine, ref: str) -> FailureDomain:
    """The domain, if ``delete`` would take it; DomainInUse otherwise."""
    with engine.connect() as conn:
        graph, _ = _load(conn)
    domain_id = graph.find(ref)
    graph.refuse_in_use(domain_id)
    return graph.view(domain_id, graph.effective())


def delete(engine: Engine, ref: str) -> Change:
    """Delete the domain (its contents stay, as domains of their own); DomainInUse when in use.

    ``Change.domain`` is the domain as it was; ``hosts_changed`` its hosts.
    """
    with engine.begin() as conn:
        graph, _ = _load(conn, lock=True)
        domain_id = graph.find(ref)
        graph.refuse_in_use(domain_id)
        before = graph.view(domain_id, graph.effective())
        conn.execute(failure_domain_hosts.delete().where(
            failure_domain_hosts.c.domain_id == domain_id))
        conn.execute(failure_domain_contents.delete().where(
            failure_domain_contents.c.domain_id == domain_id))
        conn.execute(failure_domains.delete().where(failure_domains.c.id == domain_id))
        change_stamps.bump(conn)
    return Change(domain=before, hosts_changed=before.hosts)
