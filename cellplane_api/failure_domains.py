"""The API role's failure domains: the API database's record, and Placement's aggregates kept in step with it.

A domain's uuid is a Placement aggregate whose members are its hosts'
resource providers (each compute node of the host, found through its host
mapping and its cell's database). Each write goes to the API database
first (``cellplane.objects.failure_domains``); then every host whose
domains changed has each of its providers' aggregates made to follow the
database: the uuids of its domains added, those of the other domains
removed, any other aggregate kept (``PlacementClient.change_aggregates``,
generation-safe). A delete goes the other way round: the domain's
aggregate leaves its providers first, then the domain leaves the database,
so a Placement that cannot be reached leaves the domain in place.

When Placement cannot be updated the database change is kept and the
outcome says so: ``sync`` (``cellplane failure-domain sync``) makes every
host's providers follow the database again, as does the next write that
touches the host.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterable, Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.objects import cell_mappings, compute_nodes, failure_domains, host_mappings
from cellplane.objects.failure_domains import FailureDomain
from placement.client import PlacementClient, PlacementClientError, PlacementUnreachable

LOG = logging.getLogger(__name__)


class PlacementNotUpdated(Exception):
    """Placement could not be updated (unreachable, or it refused)."""


@dataclass(frozen=True)
class PlacementOutcome:
    """What was done in Placement: providers changed, hosts with none, or why it failed."""

    providers_changed: int = 0
    hosts_without_provider: tuple[str, ...] = ()
    error: str | None = None

    def __str__(self) -> str:
        if self.error:
            return (f'not updated ({self.error}); the database change is kept: run '
                    f'`cellplane failure-domain sync`')
        said = f'{self.providers_changed} provider(s) changed'
        if self.hosts_without_provider:
            said += (f'; no compute node yet for {", ".join(self.hosts_without_provider)} '
                     f'(run `cellplane failure-domain sync` once it reports)')
        return said


def providers_of(api_engine: Engine, hosts: Iterable[str]) -> dict[str, list[str]]:
    """Host -> the uuids of its compute nodes (its resource providers), from its cell's database.

    A host mapped to no cell, or with no compute node yet, has none.
    """
    wanted = set(hosts)
    if not wanted:
        return {}
    cell_of = dict(host_mappings.list_all(api_engine))
    uuid_of = cell_mappings.uuids_by_id(api_engine)
    by_cell: dict[str, set[str]] = {}
    for host in wanted:
        if host in cell_of:
            by_cell.setdefault(uuid_of[cell_of[host]], set()).add(host)
    found: dict[str, list[str]] = {host: [] for host in wanted}
    cells = CellDatabases(api_engine)
    try:
        cells.reload()
        for cell_uuid, cell_hosts in sorted(by_cell.items()):
            for node in compute_nodes.list_with_service(cells.engine(cell_uuid)):
                if node.host in cell_hosts:
                    found[node.host].append(node.uuid)
    finally:
        cells.dispose()
    return found


def sync_hosts(api_engine: Engine, placement: PlacementClient, hosts: Iterable[str], *,
               also_remove: Iterable[str] = ()) -> PlacementOutcome:
    """Make the providers of ``hosts`` members of exactly their domains' aggregates (others kept).

    ``also_remove``: aggregate uuids to take away as well (a domain being deleted).
    Raises ``PlacementNotUpdated``.
    """
    hosts = sorted(set(hosts))
    if not hosts:
        return PlacementOutcome()
    try:
        by_host = failure_domains.host_domains(api_engine)
        managed = failure_domains.domain_uuids(api_engine) | set(also_remove)
        providers = providers_of(api_engine, hosts)
    except sa.exc.SQLAlchemyError as exc:
        raise PlacementNotUpdated(f'a database could not be read: '
                                  f'{str(exc).splitlines()[0]}') from exc
    return _apply(placement, hosts, providers, by_host, managed)


def _apply(placement: PlacementClient, hosts: list[str], providers: Mapping[str, list[str]],
           by_host: Mapping[str, Mapping[str, str]], managed: set[str]) -> PlacementOutcome:
    changed = 0
    try:
        for host in hosts:
            own = set(by_host.get(host, {}).values())
            for provider in providers.get(host, ()):
                if placement.change_aggregates(provider, add=own, remove=managed - own):
                    changed += 1
    except (PlacementUnreachable, PlacementClientError) as exc:
        raise PlacementNotUpdated(f'{type(exc).__name__}: {exc}') from exc
    return PlacementOutcome(providers_changed=changed, hosts_without_provider=tuple(
        h for h in hosts if not providers.get(h)))


def _followed(api_engine: Engine, placement: PlacementClient,
              change: failure_domains.Change) -> tuple[FailureDomain, PlacementOutcome]:
    try:
        return change.domain, sync_hosts(api_engine, placement, change.hosts_changed)
    except PlacementNotUpdated as exc:
        LOG.warning('Failure domain %s: Placement not updated: %s', change.domain.label, exc)
        return change.domain, PlacementOutcome(error=str(exc))


def create(api_engine: Engine, placement: PlacementClient, level: str, name: str, *,
           hosts: Iterable[str] = (), contains: Iterable[str] = ()
           ) -> tuple[FailureDomain, PlacementOutcome]:
    return _followed(api_engine, placement, failure_domains.create(
        api_engine, level, name, hosts=hosts, contains=contains))


def add_hosts(api_engine: Engine, placement: PlacementClient, ref: str,
              hosts: Iterable[str]) -> tuple[FailureDomain, PlacementOutcome]:
    return _followed(api_engine, placement, failure_domains.add_hosts(api_engine, ref, hosts))


def remove_hosts(api_engine: Engine, placement: PlacementClient, ref: str,
                 hosts: Iterable[str]) -> tuple[FailureDomain, PlacementOutcome]:
    return _followed(api_engine, placement,
                     failure_domains.remove_hosts(api_engine, ref, hosts))


def add_domains(api_engine: Engine, placement: PlacementClient, ref: str,
                contains: Iterable[str]) -> tuple[FailureDomain, PlacementOutcome]:
    return _followed(api_engine, placement,
                     failure_domains.add_domains(api_engine, ref, contains))


def remove_domains(api_engine: Engine, placement: PlacementClient, ref: str,
                   contained: Iterable[str]) -> tuple[FailureDomain, PlacementOutcome]:
    return _followed(api_engine, placement,
                     failure_domains.remove_domains(api_engine, ref, contained))


def delete(api_engine: Engine, placement: PlacementClient, ref: str) -> PlacementOutcome:
    """Take the domain's aggregate off its providers, then delete it; PlacementNotUpdated keeps it."""
    domain = failure_domains.check_deletable(api_engine, ref)
    outcome = _remove_aggregate(api_engine, placement, domain.uuid, domain.hosts)
    gone = failure_domains.delete(api_engine, domain.uuid)
    # Hosts it gained between the two reads (another operator's command).
    late = set(gone.hosts_changed) - set(domain.hosts)
    if late:
        _remove_aggregate(api_engine, placement, domain.uuid, late)
    return outcome


def _remove_aggregate(api_engine: Engine, placement: PlacementClient, aggregate: str,
                      hosts: Iterable[str]) -> PlacementOutcome:
    hosts = sorted(set(hosts))
    try:
        providers = providers_of(api_engine, hosts)
    except sa.exc.SQLAlchemyError as exc:
        raise PlacementNotUpdated(f'a database could not be read: '
                                  f'{str(exc).splitlines()[0]}') from exc
    # Nothing to add and only this aggregate managed: it alone is taken away.
    return _apply(placement, hosts, providers, {}, {aggregate})


def sync(api_engine: Engine, placement: PlacementClient) -> PlacementOutcome:
    """Make every mapped host's providers follow the database (after a Placement failure)."""
    hosts = [host for host, _ in host_mappings.list_all(api_engine)]
    return sync_hosts(api_engine, placement, hosts)
