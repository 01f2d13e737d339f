"""A server group while one request is scheduled: where its members are, which domains are full, the places taken.

``GroupPlaces.read`` counts the members (other than the request's own
instances) per domain at the group's level. The book surveys them first
(``book.Survey``): a member settled in its cell counts on its row's host,
one waiting for its cell where it holds its place. Each other member is
located in Placement: with an allocation it counts there; without, where
the API database says it holds a place, unless it is gone (ERROR,
deleted, no more). It only reads: the places that reading found stale (given
back) or left behind by a member a reschedule moved (moved after it) are
written by ``tidy``, which the scheduler calls right after. From the
counts come the query's ``member_of`` (hard affinity: the members' domains)
and its forbidden aggregates (hard anti-affinity: the full domains), by
the one policy rule (``cellplane.server_group_policy``).

``reserve`` makes a claimed instance hold its domain; when another
scheduler filled that domain first (anti-affinity), or put the group in
another domain first (affinity), it is refused and the walk goes
elsewhere. ``unreserve`` gives one instance's place back, and may be called
when nothing was reserved. Soft policies take no place: they only weigh.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable, Sequence

from cellplane import server_group_policy as policy
from cellplane.reservations import Reservation
from rpc_schemas.request_spec import InstanceGroup
from scheduler.instance_locator import InstanceLocator
from scheduler.server_group.book import GroupBook, Member


class GroupPlace(Reservation):
    """The place ``GroupPlaces.reserve`` gave one instance, held on the claim walk's stack."""

    def __init__(self, places: 'GroupPlaces', instance_uuid: str) -> None:
        self._places = places
        self.consumer = instance_uuid

    def _release(self) -> None:
        self._places.unreserve(self.consumer)

    def __str__(self) -> str:
        return f'the place of {self.consumer} in server group {self._places.group.uuid}'


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
    # What ``tidy`` writes: places held by members gone, and members that run
    # in another domain than their place (-> that domain).
    stale: list[Member] = dataclasses.field(default_factory=list)
    moved: list[tuple[Member, str]] = dataclasses.field(default_factory=list)
    # Instance -> the domain this request made it hold.
    taken: dict[str, str] = dataclasses.field(default_factory=dict)
    # Domains refused while this one ran: another scheduler's member filled
    # them (anti-affinity) or holds another domain (affinity).
    lost: set[str] = dataclasses.field(default_factory=set)

    @classmethod
    def read(cls, group: InstanceGroup, request_uuids: Sequence[str], book: GroupBook,
             locator: InstanceLocator | None,
             domain_of_host: Callable[[str, str], str | None],
             host_known: Callable[[str], bool] = lambda host: True,
             level_everywhere: Callable[[str], bool] = lambda level: False,
             ) -> 'GroupPlaces':
        """The group as the book, the cells and (for the members they cannot place) Placement say.

        ``host_known``: whether the host cache knows a host; a settled
        member on a host it does not know is asked of Placement, as any.
        ``level_everywhere``: whether every known host is in a domain at a
        level (a claim on a host in none holds no place: ``reserve``).
        """
        places = cls(group=group, book=book, domain_of_host=domain_of_host)
        mine = set(request_uuids)
        members = [m for m in book.members(group.uuid) if m.instance_uuid not in mine]
        places.others = [m.instance_uuid for m in members]
        survey = book.survey(places.others)
        # A settled member runs on its row's host. A waiting one has at most its
        # own scheduler's claim: in the place it holds, or, holding none under a
        # hard policy, one its scheduler is about to hold or give back (the book
        # decides between two schedulers, ``reserve``), unless that claim is on
        # a host in no domain at the level, where no place is held. Placement is
        # asked only of the others (one request each).
        every_claim_held = policy.is_hard(group) and (
            group.domain_level is None or level_everywhere(group.domain_level))
        located = {u: host for u, host in survey.settled.items() if host_known(host)}
        asked = [m.instance_uuid for m in members if m.instance_uuid not in located
                 and not (m.instance_uuid in survey.waiting
                          and (m.domain is not None or every_claim_held))]
        if asked and locator is not None:
            located.update(locator.hosts_of(asked))
        unlocated_held = [m for m in members
                          if m.instance_uuid not in located and m.domain is not None]
        places.stale = [m for m in unlocated_held if m.instance_uuid in survey.gone]
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
        for member in members:
            host = located.get(member.instance_uuid)
            if host is None and member.domain is not None and member.instance_uuid not in survey.gone:
                places.counts[member.domain] += 1
            elif host is not None and member.domain is not None and not group.soft:
                runs_in = places.domain_of(host)
                if runs_in is not None and runs_in != member.domain:
                    places.moved.append((member, runs_in))
        return places

    def tidy(self) -> None:
        """Write what ``read`` found: give back the stale places, move the moved members' after them."""
        if self.stale:
            self.book.release_stale(self.stale)
        limit = policy.place_limit(self.group)
        for member, domain in self.moved:
            self.book.follow(member, domain, limit)

    @property
    def level(self) -> str | None:
        """The failure-domain level; None at the host level."""
        return self.group.domain_level

    @property
    def hard(self) -> bool:
        return policy.is_hard(self.group)

    @property
    def anti(self) -> bool:
        return policy.is_anti(self.group)

    def domain_of(self, host: str) -> str | None:
        """The host's domain at the group's level (the host itself at ``host``)."""
        return host if self.level is None else self.domain_of_host(host, self.level)

    def full_domains(self) -> list[str]:
        """Hard anti-affinity: the domains no further member may join."""
        if not (self.hard and self.anti):
            return []
        return sorted(policy.full_domains(self.group, self.counts) | self.lost)

    def member_domains(self) -> list[str]:
        """Hard affinity: the domains the members are in (a new member must join one)."""
        return sorted(policy.member_domains(self.group, self.counts))

    def query_member_of(self) -> list[str]:
        """What Placement is asked to keep the group together: ``member_of`` (above the host level)."""
        return [] if self.level is None else self.member_domains()

    def query_not_member_of(self) -> list[str]:
        """What Placement is asked to keep the group apart: ``!in:`` (above the host level)."""
        return [] if self.level is None else self.full_domains()

    def reserve(self, instance_uuid: str, host: str) -> bool:
        """Make the instance hold the host's domain; False if another member took it (or another) first."""
        if not self.hard:
            return True
        domain = self.domain_of(host)
        if domain is None:
            return True
        if not self.book.hold(instance_uuid, domain, policy.place_limit(self.group)):
            self.lost.add(domain)
            return False
        self.taken[instance_uuid] = domain
        return True

    def unreserve(self, instance_uuid: str) -> None:
        """Give back the place ``reserve`` took for the instance; nothing if it took none."""
        if self.taken.pop(instance_uuid, None) is not None:
            self.book.release([instance_uuid])

    def unreserve_all(self) -> list[str]:
        """Give back every place this request took (it failed); the instances."""
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
