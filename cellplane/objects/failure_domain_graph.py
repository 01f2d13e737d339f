"""The failure domains as a graph, in memory: what contains what, every host of a domain, the rules.

Pure (no I/O): ``cellplane/objects/failure_domains.py`` reads every domain
into a ``DomainGraph`` in one transaction, asks it, changes it and stores
what it then says. Levels are ordered smallest first; a domain contains
only domains of smaller levels, so the containment has no cycle. The
errors say what is wrong with the data (which domain, which host); how an
operator repairs it is the CLI's to say.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence


class FailureDomainError(Exception):
    """A failure-domain request that cannot be done as asked."""


class UnknownLevel(FailureDomainError):
    """The level is not one the scheduler was started with."""


class DomainNotFound(FailureDomainError):
    """No domain has this LEVEL:NAME or uuid."""

    def __init__(self, ref: str) -> None:
        super().__init__(f'no failure domain {ref!r}')
        self.ref = ref


class HostNotMapped(FailureDomainError):
    """The host is mapped to no cell: not a compute host cellplane knows."""

    def __init__(self, host: str) -> None:
        super().__init__(f'no compute host {host!r} is mapped to a cell')
        self.host = host


class HostConflict(FailureDomainError):
    """The request would put a host in two domains of one level."""


class DomainInUse(FailureDomainError):
    """The domain is contained in others (``containers``), or has hosts of its own (``own_hosts``)."""

    def __init__(self, label: str, *, containers: Sequence[str] = (),
                 own_hosts: Sequence[str] = ()) -> None:
        if containers:
            said = f'{label} is part of {", ".join(containers)}, whose hosts would change'
        else:
            said = f'{label} still has host(s) {", ".join(own_hosts)}'
        super().__init__(said)
        self.label = label
        self.containers = tuple(containers)
        self.own_hosts = tuple(own_hosts)


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


# (level, host) -> (the id of its domain at that level, whether the host is its own)
HostRows = dict[tuple[str, str], tuple[int, bool]]


@dataclass
class DomainGraph:
    """Every domain by id, its own hosts and what it contains, with the levels they are of."""

    levels: list[str]
    domains: dict[int, tuple[str, str, str]]              # id -> (uuid, level, name)
    own: dict[int, set[str]] = field(default_factory=dict)
    contents: dict[int, set[int]] = field(default_factory=dict)

    def label(self, domain_id: int) -> str:
        _, level, name = self.domains[domain_id]
        return f'{level}:{name}'

    def level_of(self, domain_id: int) -> str:
        return self.domains[domain_id][1]

    def rank(self, level: str) -> int:
        return self.levels.index(level)

    def find(self, ref: str) -> int:
        """The id of the domain ``LEVEL:NAME`` or uuid ``ref``; DomainNotFound."""
        for domain_id, (uuid, level, name) in self.domains.items():
            if ref == uuid or ref == f'{level}:{name}':
                return domain_id
        raise DomainNotFound(ref)

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

    def host_rows(self) -> HostRows:
        """Every (level, host) as the domains now have them; HostConflict for a host in two of a level."""
        effective = self.effective()
        rows: HostRows = {}
        for domain_id in sorted(effective):
            level = self.level_of(domain_id)
            for host in sorted(effective[domain_id]):
                taken = rows.get((level, host))
                if taken is not None:
                    first, second = sorted((taken[0], domain_id), key=self.label)
                    raise HostConflict(
                        f'host {host} would be in {self.label(first)}{self.via(first, host)} '
                        f'and in {self.label(second)}{self.via(second, host)}; a host is in '
                        f'at most one {level}')
                rows[(level, host)] = (domain_id, host in self.own.get(domain_id, ()))
        return rows

    def checked_member(self, level: str, label: str, ref: str) -> int:
        """The domain ``ref``, if a domain ``label`` at ``level`` may be made of it."""
        member = self.find(ref)
        if self.rank(self.level_of(member)) >= self.rank(level):
            raise FailureDomainError(
                f'{label} cannot contain {self.label(member)}: a {level} is made of smaller '
                f'levels only (smallest first: {", ".join(self.levels)})')
        for container in self.containers(member):
            if self.level_of(container) == level:
                raise FailureDomainError(
                    f'{self.label(member)} is already in {self.label(container)}; a domain '
                    f'is in at most one {level}')
        return member

    def refuse_in_use(self, domain_id: int) -> None:
        """DomainInUse if the domain is contained in another or has hosts of its own."""
        containers = [self.label(c) for c in self.containers(domain_id)]
        own = sorted(self.own.get(domain_id, ()))
        if containers or own:
            raise DomainInUse(self.label(domain_id), containers=containers, own_hosts=own)

    def check_levels_fit(self, names: Sequence[str]) -> None:
        """LevelsInUse unless every domain's level is among ``names`` and contains only smaller ones."""
        used = sorted({level for _, level, _ in self.domains.values()} - set(names))
        if used:
            raise LevelsInUse(
                f'failure-domain level(s) {", ".join(used)} have domains but are not in '
                f'[scheduler] failure_domain_levels ({", ".join(names) or "empty"}); add '
                f'them back, or delete those domains first')
        order = list(names)
        for container, members in sorted(self.contents.items()):
            for member in sorted(members):
                if (order.index(self.level_of(member))
                        >= order.index(self.level_of(container))):
                    raise LevelsInUse(
                        f'{self.label(container)} contains {self.label(member)}, but '
                        f'[scheduler] failure_domain_levels ({", ".join(names)}) does not '
                        f'put {self.level_of(member)} below {self.level_of(container)}')


def hosts_changed(before: HostRows, after: HostRows) -> tuple[str, ...]:
    """The hosts whose set of domains differs between two ``host_rows``."""

    def by_host(rows: HostRows) -> dict[str, set[int]]:
        found: dict[str, set[int]] = {}
        for (_, host), (domain_id, _) in rows.items():
            found.setdefault(host, set()).add(domain_id)
        return found
    was, now = by_host(before), by_host(after)
    return tuple(sorted(h for h in set(was) | set(now) if was.get(h) != now.get(h)))
