"""A server group while one request is scheduled: where its members are, which domains are full, taking a place.

``GroupPlaces.read`` counts the members (other than the request's own
instances) per domain at the group's level: a member with an allocation in
Placement counts where that allocation is; one without, where the API
database says it holds a place, unless its cell says it is in ERROR,
deleted or gone (then the place is given back). A member whose allocation
is in another domain than its place (a reschedule at the host level moved
it) has its place moved after it. From the counts come the
query's ``member_of`` (hard affinity: the members' domains) and its
forbidden aggregates (hard anti-affinity: the domains holding
``max_per_domain`` members). ``take`` makes a claimed instance hold its
domain; when another scheduler filled that domain first (anti-affinity),
or put the group in another domain first (affinity), the hold is refused
and the walk goes elsewhere (``cellplane.objects.server_groups``).
Soft policies take no place: they only weigh.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable, Iterable, Mapping, Protocol, Sequence

from cellplane.objects.server_groups import Member
from rpc_schemas.request_spec import ANTI_AFFINITY, InstanceGroup
from scheduler.host_state import HOST_LEVEL


class GroupBook(Protocol):
    def members(self, group_uuid: str) -> Sequence[Member]: ...

    def gone(self, instance_uuids: Sequence[str]) -> set[str]: ...

    def hold(self, instance_uuid: str, domain: str, max_per_domain: int | None) -> bool: ...

    def follow(self, member: Member, domain: str, max_per_domain: int | None) -> bool: ...

    def release(self, instance_uuids: Iterable[str]) -> None: ...

    def release_stale(self, held: Iterable[Member]) -> None: ...

    def domain_names(self, level: str) -> Mapping[str, str]: ...


class Locator(Protocol):
    def hosts_of(self, instance_uuids: Iterable[str]) -> Mapping[str, str]: ...


@dataclasses.dataclass
class GroupPlaces:
    group: InstanceGroup
    book: GroupBook
    domain_of_host: Callable[[str, str], str | None]
    # Domain -> members (not of this request) in it; hosts of members whose
    # domain at the level is not known.
    counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    unknown_hosts: set[str] = dataclasses.field(default_factory=set)
    # The group's members when it was read, this request's excepted.
    others: list[str] = dataclasses.field(default_factory=list)
    # Instance -> the domain this request made it hold.
    taken: dict[str, str] = dataclasses.field(default_factory=dict)
    # Domains refused while this one ran: another scheduler's member filled
    # them (anti-affinity) or holds another domain (affinity).
    lost: set[str] = dataclasses.field(default_factory=set)

    @classmethod
    def read(cls, group: InstanceGroup, request_uuids: Sequence[str], book: GroupBook,
             locator: Locator | None,
             domain_of_host: Callable[[str, str], str | None]) -> 'GroupPlaces':
        places = cls(group=group, book=book, domain_of_host=domain_of_host)
        mine = set(request_uuids)
        members = [m for m in book.members(group.uuid) if m.instance_uuid not in mine]
        places.others = [m.instance_uuid for m in members]
        located = dict(locator.hosts_of(places.others)) if locator is not None else {}
        unlocated_held = [m for m in members
                          if m.instance_uuid not in located and m.domain is not None]
        gone = book.gone([m.instance_uuid for m in unlocated_held])
        if gone:
            book.release_stale([m for m in unlocated_held if m.instance_uuid in gone])
        # Hosts the sender said members run on (the API role sends none; a
        # caller that knows them may), beside what is read here.
        for host in [*group.hosts, *(located.get(m.instance_uuid) for m in members)]:
            if host is None:
                continue
            domain = places.domain_of(host)
            if domain is None:
                places.unknown_hosts.add(host)
            else:
                places.counts[domain] += 1
        limit = group.max_per_domain if group.policy == ANTI_AFFINITY else None
        for member in members:
            host = located.get(member.instance_uuid)
            if host is None and member.domain is not None and member.instance_uuid not in gone:
                places.counts[member.domain] += 1
            elif host is not None and member.domain is not None and not group.soft:
                runs_in = places.domain_of(host)
                if runs_in is not None and runs_in != member.domain:
                    book.follow(member, runs_in, limit)
        return places

    @property
    def level(self) -> str | None:
        """The failure-domain level; None at the host level."""
        return None if self.group.level in (None, HOST_LEVEL) else self.group.level

    @property
    def hard(self) -> bool:
        return not self.group.soft

    @property
    def anti(self) -> bool:
        return self.group.policy == ANTI_AFFINITY

    def domain_of(self, host: str) -> str | None:
        """The host's domain at the group's level (the host itself at ``host``)."""
        return host if self.level is None else self.domain_of_host(host, self.level)

    def full_domains(self) -> list[str]:
        """Hard anti-affinity: the domains no further member may join."""
        if not (self.hard and self.anti):
            return []
        full = {d for d, n in self.counts.items() if n >= self.group.max_per_domain}
        return sorted(full | self.lost)

    def query_member_of(self) -> list[str]:
        """What Placement is asked to keep the group together: ``member_of`` (above the host level)."""
        return [] if self.level is None else self.member_domains()

    def query_not_member_of(self) -> list[str]:
        """What Placement is asked to keep the group apart: ``!in:`` (above the host level)."""
        return [] if self.level is None else self.full_domains()

    def member_domains(self) -> list[str]:
        """Hard affinity: the domains the members are in (a new member must join one)."""
        if not self.hard or self.anti:
            return []
        return sorted(self.counts)

    def take(self, instance_uuid: str, host: str) -> bool:
        """Make the instance hold the host's domain; False if another member took it (or another) first."""
        if not self.hard:
            return True
        domain = self.domain_of(host)
        if domain is None:
            return True
        limit = self.group.max_per_domain if self.anti else None
        if not self.book.hold(instance_uuid, domain, limit):
            self.lost.add(domain)
            return False
        self.taken[instance_uuid] = domain
        return True

    def give_back(self) -> list[str]:
        """Release every place this request took (it failed); the instances."""
        undone = list(self.taken)
        if undone:
            self.book.release(undone)
        self.taken.clear()
        return undone

    def keeps_alternate(self, claimed_host: str, host: str) -> bool:
        """Whether an alternate keeps the claimed host's place.

        Under a hard policy at a level above the host, a reschedule stays in
        the domain held for the instance, so it can never take a domain that
        another member holds (anti-affinity) or leave the group's (affinity).
        At the host level every alternate is another host: the cell
        conductor checks it against the members' allocations before using it.
        """
        if not self.hard or self.level is None:
            return True
        return self.domain_of(host) == self.domain_of(claimed_host)

    def filled(self) -> InstanceGroup:
        """The group as sent on: the other members, and the places they hold or took."""
        domains = [d for d, n in sorted(self.counts.items()) for _ in range(n)]
        return dataclasses.replace(self.group, members=list(self.others),
                                   domains=domains)

    def why_full(self) -> str | None:
        """For NoValidHost under hard anti-affinity: which domains are full, by name."""
        full = self.full_domains()
        if not full:
            return None
        label = self.group.name or self.group.uuid
        if self.level is None:
            return (f'anti-affinity at host: group {label} has members on '
                    f'{", ".join(full)}')
        names = dict(self.book.domain_names(self.level))
        named = sorted(names.get(d, d) for d in full)
        if set(names) <= set(full):
            return (f'anti-affinity at {self.level}: group {label} has members in every '
                    f'{self.level} ({", ".join(named)})')
        return (f'anti-affinity at {self.level}: group {label} has members in '
                f'{self.level} {", ".join(named)}, and no host of another {self.level} '
                f'could take it')
