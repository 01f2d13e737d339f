"""Turn a RequestSpec into the Placement ``GET /allocation_candidates`` query.

What the flavor asks for becomes ``resources`` (VCPU, MEMORY_MB, DISK_GB from
the flavor size, overridden by ``resources:CLASS=N`` extra specs, removed by
``resources:CLASS=0``), ``required`` (``trait:NAME=required``, and
``!NAME`` for ``trait:NAME=forbidden``) and ``member_of`` (requested
aggregates; the availability zone when the caller knows which Placement
aggregates make up that zone; the failure domains of an affinity group's
members at the group's level; ``!in:`` the domains a hard anti-affinity
group has filled, or that a ``different_domain`` hint names, microversion
1.32). Everything Placement cannot answer is left to the filters.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Mapping, Sequence

from cellplane.traits import COMPUTE_STATUS_DISABLED
from rpc_schemas.flavor import Flavor, InvalidResourcesSpec
from rpc_schemas.request_spec import RequestSpec
from scheduler.errors import InvalidFlavorExtraSpec

TRAIT_PREFIX = 'trait:'
# Put on a host's providers by ``cellplane-manage service disable``: every
# query forbids it, so Placement never offers the host.
DISABLED_TRAIT = COMPUTE_STATUS_DISABLED
TRAIT_REQUIRED = 'required'
TRAIT_FORBIDDEN = 'forbidden'

_NAME_RE = re.compile(r'^[A-Z0-9_]+$')


@dataclasses.dataclass(frozen=True)
class CandidatesQuery:
    """One allocation-candidates query; ``to_params()`` gives the query string."""

    resources: dict[str, int]
    required_traits: frozenset[str] = frozenset()
    forbidden_traits: frozenset[str] = frozenset()
    # Each entry is one member_of parameter: the provider must be in at least
    # one aggregate of every entry.
    member_of: tuple[tuple[str, ...], ...] = ()
    # The provider must be in none of these aggregates (``member_of=!in:``).
    forbidden_aggregates: tuple[str, ...] = ()
    limit: int | None = None

    def to_params(self) -> list[tuple[str, str]]:
        """Query parameters in a stable order, e.g.
        ``[('resources', 'DISK_GB:10,MEMORY_MB:2048,VCPU:2'),
        ('required', 'HW_CPU_X86_AVX2,!CUSTOM_SLOW'), ('member_of', 'in:a,b'),
        ('limit', '1000')]``.
        """
        params = [('resources', ','.join(
            f'{rc}:{amount}' for rc, amount in sorted(self.resources.items())))]
        traits = sorted(self.required_traits) + [
            f'!{t}' for t in sorted(self.forbidden_traits)]
        if traits:
            params.append(('required', ','.join(traits)))
        for aggregates in self.member_of:
            params.append(('member_of', 'in:' + ','.join(sorted(aggregates))))
        if self.forbidden_aggregates:
            params.append(('member_of', '!in:' + ','.join(sorted(self.forbidden_aggregates))))
        if self.limit is not None:
            params.append(('limit', str(self.limit)))
        return params

    def one_constraint_at_a_time(self) -> list[tuple[str, 'CandidatesQuery']]:
        """(what it asks, a ``limit=1`` query asking only that), per constraint.

        Used to say which constraint no provider meets when the whole query
        returns nothing: ``('VCPU:64', ...)``, ``('trait HW_CPU_X86_AVX2', ...)``,
        ``('no trait CUSTOM_SLOW', ...)``, ``('member_of in:a,b', ...)``.
        Traits and aggregates are asked with the smallest resource of the
        request (one unit), since Placement needs some resource to search.
        """
        singles = [(f'{rc}:{amount}', CandidatesQuery(resources={rc: amount}, limit=1))
                   for rc, amount in sorted(self.resources.items())]
        if not self.resources:
            return singles
        probe = {sorted(self.resources)[0]: 1}
        singles += [(f'trait {t}', CandidatesQuery(
            resources=probe, required_traits=frozenset([t]), limit=1))
            for t in sorted(self.required_traits)]
        singles += [(_without(t), CandidatesQuery(
            resources=probe, forbidden_traits=frozenset([t]), limit=1))
            for t in sorted(self.forbidden_traits)]
        singles += [(f'member_of in:{",".join(sorted(a))}', CandidatesQuery(
            resources=probe, member_of=(a,), limit=1)) for a in self.member_of]
        if self.forbidden_aggregates:
            aggregates = ','.join(sorted(self.forbidden_aggregates))
            singles.append((f'member_of !in:{aggregates}', CandidatesQuery(
                resources=probe, forbidden_aggregates=self.forbidden_aggregates, limit=1)))
        return singles


def _without(trait: str) -> str:
    if trait == DISABLED_TRAIT:
        return f'an enabled compute service (every host is disabled: {DISABLED_TRAIT})'
    return f'no trait {trait}'


def flavor_resources(flavor: Flavor) -> dict[str, int]:
    """Resource class -> amount one instance of ``flavor`` needs (no zeros)."""
    try:
        return flavor.placement_resources()
    except InvalidResourcesSpec as exc:
        raise InvalidFlavorExtraSpec(str(exc)) from None


def flavor_traits(flavor: Flavor) -> tuple[frozenset[str], frozenset[str]]:
    """(required traits, forbidden traits) from ``trait:NAME=...`` extra specs."""
    required, forbidden = set(), set()
    for key, value in flavor.extra_specs.items():
        if not key.startswith(TRAIT_PREFIX):
            continue
        trait = key[len(TRAIT_PREFIX):]
        if not _NAME_RE.match(trait):
            raise InvalidFlavorExtraSpec(
                f'flavor {flavor.name}: extra spec {key!r} does not name a '
                f'trait (upper case letters, digits, underscores)')
        if value == TRAIT_REQUIRED:
            required.add(trait)
        elif value == TRAIT_FORBIDDEN:
            forbidden.add(trait)
        else:
            raise InvalidFlavorExtraSpec(
                f'flavor {flavor.name}: extra spec {key}={value!r} must be '
                f'"{TRAIT_REQUIRED}" or "{TRAIT_FORBIDDEN}"')
    return frozenset(required), frozenset(forbidden)


def build_query(spec: RequestSpec, *, limit: int | None = None,
                zone_aggregates: Mapping[str, Sequence[str]] | None = None,
                affinity_aggregates: Sequence[str] = (),
                required_aggregates: Sequence[Sequence[str]] = (),
                forbidden_aggregates: Sequence[str] = (),
                cell_trait: str | None = None) -> CandidatesQuery:
    """The candidates query for one instance of ``spec``.

    ``cell_trait``: the trait every host of the requested cell carries
    (``cellplane/traits.py``), required so that Placement offers only that
    cell's hosts.

    ``zone_aggregates`` maps an availability zone to the Placement
    aggregates its hosts are in; when the requested zone is in it, the zone
    is enforced by Placement (``member_of``) as well as by the zone filter.
    ``affinity_aggregates`` are the failure domains an affinity group's
    members are in: Placement then only offers hosts inside them.
    """
    resources = flavor_resources(spec.flavor)
    if not resources:
        raise InvalidFlavorExtraSpec(
            f'flavor {spec.flavor.name} asks for no resources at all; Placement '
            f'cannot claim nothing. Give it vcpus, memory or a resources:* spec')
    required, forbidden = flavor_traits(spec.flavor)
    both = required & forbidden
    if both:
        raise InvalidFlavorExtraSpec(
            f'flavor {spec.flavor.name}: traits both required and forbidden: '
            f'{", ".join(sorted(both))}')
    if DISABLED_TRAIT in required:
        raise InvalidFlavorExtraSpec(
            f'flavor {spec.flavor.name} requires {DISABLED_TRAIT}: the hosts of a '
            f'disabled compute service are never offered')
    forbidden |= {DISABLED_TRAIT}
    if cell_trait:
        required = required | {cell_trait}
    member_of = []
    destination = spec.requested_destination
    if destination is not None and destination.aggregates:
        member_of.append(tuple(sorted(destination.aggregates)))
    if spec.availability_zone and zone_aggregates:
        zone = zone_aggregates.get(spec.availability_zone)
        if zone:
            member_of.append(tuple(sorted(zone)))
    if affinity_aggregates:
        member_of.append(tuple(sorted(set(affinity_aggregates))))
    for aggregates in required_aggregates:
        member_of.append(tuple(sorted(set(aggregates))))
    return CandidatesQuery(resources=resources, required_traits=required,
                           forbidden_traits=forbidden, member_of=tuple(member_of),
                           forbidden_aggregates=tuple(sorted(set(forbidden_aggregates))),
                           limit=limit)
