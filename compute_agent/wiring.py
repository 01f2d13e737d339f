"""The one way to build a compute agent: from its configuration and resolved dependencies.

``cellplane-compute`` (``compute_agent/cmd.py``), the embedded mode and the
test harnesses all call ``build_compute_agent``; they differ only in what
they hand it (the transport, the Placement client, the virt drivers, and
the host names where the caller chooses them). What it promises:

- the agent serves the hosts of ``hosted_host.hosted_host_names`` (``[DEFAULT]
  host``, or ``<host>-1..N`` with ``[compute] hosted_hosts = N``), or the
  names given: topic ``compute`` as server ``<each host>``, on one listener
  (one broker connection, whatever N), and as server ``<host>`` itself;
- one heartbeat message every ``[service] report_interval`` carries the
  status of every running host once (``host_heartbeats``, cell conductor API
  1.10: the status, ``[cell] name`` included, the hosts' names, and the
  builds each holds, which tells the cell conductor they started: a build
  never said started is a lost cast);
- at start and every ``[compute] report_interval``, each running host's node
  is reported: Placement is brought in sync where the driver's view changed
  or its refresh is due, and one ``compute_node_updates`` message carries
  every node record; at the first report, a host with no provider yet is
  created with its traits, and the inventories of such hosts go a hundred
  per request (``PlacementClient.set_many_inventories``); a hollow agent
  refreshes all its hosts at once every
  ``[compute] placement_refresh_interval``, from one list of the hollow
  providers (a request per host was 17 a second for 5,000 hosts at rest);
- at start, the hollow hosts (``hosted_host.HOLLOW_HOST_TRAIT``) named
  ``<host>-<i>`` that this agent no longer serves (``hosted_hosts`` was
  lowered) are removed where they hold no allocation:
  their providers in Placement, their compute node and service rows (cast to
  the cell conductor); hosts that still hold allocations are kept and named
  in a warning;
- at start (and at each ``start_host``), a host that holds guests asks its
  cell conductor which were evacuated while it was down, destroys them and
  frees their migrations' allocations before its first heartbeat or report
  (``compute_agent/evacuated.py``);
- ``stop_host`` / ``start_host`` stop and start one hosted host alone.

The returned ``ComputeAgent`` is not started: the daemon calls
``service.run()``, in-process users ``service.start()`` and ``stop()``.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import random
import threading
import time
from typing import Callable, Iterable, Sequence

from oslo_config import cfg

from cellplane.context import new_context
from cellplane.heartbeat import current_status
from cellplane.periodic import PeriodicTask
from cellplane.service import Service
from cellplane.traits import cell_trait
from compute_agent import rpcapi
from compute_agent.builder import InstanceBuilder
from compute_agent.evacuated import EvacuatedGuests
from compute_agent.hosted_host import HOLLOW_HOST_TRAIT, HostedHost, hosted_host_names, removed_host_index
from compute_agent.manager import ComputeManager
from compute_agent.resource_reporter import NewProvider, ResourceReporter
from compute_agent.rpcapi import ComputeAPI
from compute_agent.virt.driver import VirtDriver
from conductor.cell.rpcapi import CellConductorAPI
from placement.client import (
    PlacementClient,
    PlacementClientError,
    PlacementUnreachable,
    Provider,
)

LOG = logging.getLogger(__name__)

BINARY = 'cellplane-compute'

# Records and heartbeats per message: a few hundred keep a message well
# under a megabyte whatever the number of hosts.
BATCH = 250
# Hosts brought in sync with Placement at once at the first report.
FIRST_SYNC_THREADS = 8
# New hosts whose inventories go to Placement in one request at the first report.
INVENTORIES_PER_REQUEST = 100


@dataclasses.dataclass
class ComputeAgent:
    """A built compute agent: its ``Service``, its hosts, and what tests look into."""

    name: str
    hosts: dict[str, HostedHost]
    service: Service
    manager: ComputeManager
    reports: 'HostReports'

    # The one host of an ordinary agent (the first host of a hollow one).
    @property
    def first(self) -> HostedHost:
        return next(iter(self.hosts.values()))

    @property
    def host(self) -> str:
        return self.first.name

    @property
    def driver(self) -> VirtDriver:
        return self.first.driver

    @property
    def builder(self) -> InstanceBuilder:
        return self.first.builder

    @property
    def reporter(self) -> ResourceReporter:
        return self.first.reporter

    @property
    def node_uuid(self) -> str:
        return self.first.node_uuid

    def apply_stopped_hosts(self, names: Iterable[str]) -> None:
        """Stop the hosts named, start the others that were stopped (``[compute] stopped_hosts``)."""
        wanted = set(names)
        unknown = sorted(wanted - set(self.hosts))
        if unknown:
            LOG.error('[compute] stopped_hosts names host(s) this agent does not serve, '
                      'ignored: %s', ', '.join(unknown))
        for host_name, hosted in self.hosts.items():
            if host_name in wanted and hosted.running:
                self.stop_host(host_name)
            elif host_name not in wanted and not hosted.running:
                self.start_host(host_name)

    def stop_host(self, name: str) -> None:
        """Stop one hosted host: no heartbeat, no report; its messages wait."""
        self.hosts[name].stop()

    def start_host(self, name: str) -> None:
        """Start a stopped hosted host; the messages it held are handled in the background.

        Its guests are checked for evacuated ones before it reports again.
        """
        self.reports.evacuated.expect([self.hosts[name]])
        held = self.hosts[name].start()
        if held:
            threading.Thread(target=_run_all, args=(held,), name=f'{name}-held',
                             daemon=True).start()


def _run_all(work: Iterable[Callable[[], None]]) -> None:
    for item in work:
        try:
            item()
        except Exception:  # one held message must not stop the rest
            LOG.exception('A message held while its host was stopped failed')


def _chunks(items: Sequence, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _unknown_trait(exc: PlacementClientError) -> bool:
    """Whether Placement refused a list because it does not know a trait it was asked for."""
    return exc.status == 400 and 'No such trait' in exc.detail


class HostReports:
    """The agent's periodic reports: heartbeats and node reports of all its running hosts."""

    def __init__(self, conf: cfg.ConfigOpts, *, name: str, hosts: dict[str, HostedHost],
                 placement: PlacementClient, conductor: CellConductorAPI,
                 evacuated: EvacuatedGuests) -> None:
        self._conf = conf
        self.evacuated = evacuated
        self._name = name
        self._hosts = hosts
        self._placement = placement
        self._conductor = conductor
        self._first = True
        # Host -> (the node record last sent, when to send it again unchanged).
        self._sent: dict[str, tuple[object, float]] = {}
        self._clock = time.monotonic
        # A hollow agent refreshes its hosts' providers together, from one
        # list, every placement_refresh_interval (its reporters never do
        # by themselves); the first falls at a random point of the interval.
        self._lists_providers = len(hosts) > 1
        self._list_after: float | None = None

    def running(self) -> list[HostedHost]:
        return [h for h in self._hosts.values() if h.running]

    def reporting(self) -> list[HostedHost]:
        """The running hosts that may report: not those still to be checked for evacuated guests."""
        waiting = self.evacuated.unchecked()
        return [h for h in self.running() if h.name not in waiting]

    def heartbeat(self) -> None:
        """One status for all the reporting hosts, their names, and the builds each holds.

        Cell conductor API 1.10 (``host_heartbeats``): one message and no
        payload per host; the client sends a status per host to a conductor
        capped below it.
        """
        hosts = self.reporting()
        if not hosts:
            return
        status = current_status(self._conf, binary=BINARY, topic=rpcapi.TOPIC,
                                host=self._name)
        building = {h.name: held for h in hosts if (held := h.builder.building())}
        self._conductor.host_heartbeats(new_context(), status, [h.name for h in hosts],
                                        building, batch=BATCH)

    def report(self) -> None:
        """Sync each running host with Placement (where due); send the node records that changed.

        A record that did not change is sent again every
        ``[compute] placement_refresh_interval`` (each host at its own point
        of the interval), so that a row lost from the cell DB comes back; a
        thousand idle hosts then cost the cell conductor nothing in between.
        """
        # Evacuated guests go before their host says anything (a call to the
        # cell conductor: here, not on the heartbeat's thread).
        self.evacuated.settle(self.running())
        hosts = self.reporting()
        if self._first:
            providers = self._providers_of_this_agent()
            if providers is not None:
                self._remove_hosts_no_longer_served(providers)
            synced = self._sync_all_at_once(hosts, providers)
            self._first = False
            self._list_after = self._clock() + random.uniform(
                0, self._conf.compute.placement_refresh_interval)
        elif self._lists_providers and self._clock() >= self._list_after:
            synced = self._refresh_from_list(hosts)
        else:
            synced = [h for h in hosts if self._sync(h)]
        records = self._records_to_send(synced)
        for chunk in _chunks(records, BATCH):
            self._conductor.compute_node_updates(new_context(), chunk)

    def _records_to_send(self, hosts: list[HostedHost]) -> list:
        now = self._clock()
        refresh = self._conf.compute.placement_refresh_interval
        records = []
        for hosted in hosts:
            record = hosted.reporter.node_record()
            last = self._sent.get(hosted.name)
            if last is not None and last[0] == record and now < last[1]:
                continue
            spread = random.uniform(0, refresh) if last is None else refresh
            self._sent[hosted.name] = (record, now + spread)
            records.append(record)
        return records

    def _refresh_from_list(self, hosts: list[HostedHost]) -> list[HostedHost]:
        """The periodic re-read of a hollow agent: one list of the hollow providers, not a GET per host.

        A host whose provider is at the generation its reporter left it
        costs nothing more; one that moved is read (inventory, traits), one
        that is gone is created again. If Placement does not answer, the
        hosts are synced as between refreshes and the list is tried again
        at the next report.
        """
        try:
            listed = {p.uuid: p for p in self._placement.list_providers(
                required=[HOLLOW_HOST_TRAIT])}
        except PlacementClientError as exc:
            if not _unknown_trait(exc):
                LOG.warning('Could not list the providers of hosts to refresh them, trying '
                            'again at the next report: %s', exc)
                return [h for h in hosts if self._sync(h)]
            # No provider has the trait, nor does Placement know it (its
            # database was reset, or the trait deleted after the providers):
            # every host's provider is gone, and is created again.
            listed = {}
        except PlacementUnreachable as exc:
            LOG.warning('Could not list the providers of hosts to refresh them, trying '
                        'again at the next report: %s', exc)
            return [h for h in hosts if self._sync(h)]
        self._list_after = self._clock() + self._conf.compute.placement_refresh_interval
        return [h for h in hosts
                if (self._sync(h, listed=listed[h.node_uuid]) if h.node_uuid in listed
                    else self._sync(h, absent=True, force=True))]

    def _sync(self, hosted: HostedHost, *, absent: bool = False, force: bool = False,
              listed: Provider | None = None) -> bool:
        try:
            hosted.reporter.sync_placement(absent=absent, force=force, listed=listed)
        except (PlacementUnreachable, PlacementClientError) as exc:
            LOG.error('Resource report of %s failed, retrying in the next interval: %s',
                      hosted.name, exc)
            return False
        return True

    def _sync_all_at_once(self, hosts: list[HostedHost],
                          providers: list | None = None) -> list[HostedHost]:
        """The first sync of every host; ``providers`` (this agent's, listed) spares a lookup each.

        A host whose provider was not listed is new: its provider is created
        with its traits, and the inventories of the new hosts are written
        ``INVENTORIES_PER_REQUEST`` per request (``set_many_inventories``),
        one by one where Placement refuses that (then two requests per new
        host, not three). The others are synced as at any report.
        """
        if len(hosts) <= 1:
            return [h for h in hosts if self._sync(h)]
        listed = None if providers is None else {p.uuid for p in providers}

        def first(hosted: HostedHost) -> bool | NewProvider:
            if listed is None or hosted.reporter.node_uuid in listed:
                return self._sync(hosted)
            try:
                new = hosted.reporter.create_new_provider()
            except (PlacementUnreachable, PlacementClientError) as exc:
                LOG.error('Resource report of %s failed, retrying in the next interval: %s',
                          hosted.name, exc)
                return False
            return self._sync(hosted) if new is None else new

        with concurrent.futures.ThreadPoolExecutor(
                max_workers=FIRST_SYNC_THREADS,
                thread_name_prefix=f'{self._name}-first-sync') as pool:
            done = list(pool.map(first, hosts))
            new = [(h, n) for h, n in zip(hosts, done, strict=True)
                   if isinstance(n, NewProvider)]
            written = set()
            for names in pool.map(self._write_inventories,
                                  _chunks(new, INVENTORIES_PER_REQUEST)):
                written.update(names)
        synced = [h for h, ok in zip(hosts, done, strict=True)
                  if ok is True or h.name in written]
        LOG.info('%d of %d hosted host(s) in sync with Placement', len(synced), len(hosts))
        return synced

    def _write_inventories(self, new: list[tuple[HostedHost, NewProvider]]) -> list[str]:
        """The inventories of new providers in one request, else one by one; the hosts done."""
        try:
            generations = self._placement.set_many_inventories(
                {n.uuid: (n.generation, n.inventory) for _, n in new})
        except PlacementUnreachable as exc:
            LOG.error('Resource reports of %d new host(s) failed, retrying in the next '
                      'interval: %s', len(new), exc)
            return []
        except PlacementClientError as exc:
            LOG.debug('Inventories of %d new host(s) not written in one request (%s); '
                      'one by one', len(new), exc)
        else:
            for hosted, n in new:
                hosted.reporter.inventory_written(n, generations[n.uuid])
            return [hosted.name for hosted, _ in new]
        done = []
        for hosted, n in new:
            try:
                hosted.reporter.write_inventory(n)
            except (PlacementUnreachable, PlacementClientError) as exc:
                LOG.error('Resource report of %s failed, retrying in the next interval: %s',
                          hosted.name, exc)
                continue
            done.append(hosted.name)
        return done

    def _providers_of_this_agent(self) -> list | None:
        """The providers named ``<agent>-...`` (one request), or None if Placement did not answer."""
        try:
            return self._placement.list_providers(name_prefix=f'{self._name}-')
        except (PlacementUnreachable, PlacementClientError) as exc:
            LOG.warning('Could not look for hosts this agent no longer serves (%s); '
                        'trying again at the next start', exc)
            return None

    def _remove_hosts_no_longer_served(self, providers: list) -> None:
        gone, kept = [], []
        for provider in providers:
            if (provider.name in self._hosts
                    or removed_host_index(self._name, provider.name) is None):
                continue
            try:
                if HOLLOW_HOST_TRAIT not in self._placement.get_traits(provider.uuid):
                    continue
                self._placement.delete_provider(provider.uuid)
            except PlacementClientError as exc:
                kept.append(f'{provider.name} ({exc})')
                continue
            gone.append(provider.name)
        if gone:
            self._conductor.remove_compute_hosts(new_context(), gone)
            LOG.info('Removed %d host(s) this agent no longer serves: %s', len(gone),
                     ', '.join(sorted(gone)))
        if kept:
            LOG.warning('Kept %d host(s) this agent no longer serves, as Placement '
                        'refused to delete them (move or delete their instances, then '
                        'restart this agent): %s', len(kept), '; '.join(sorted(kept)))


def build_compute_agent(conf: cfg.ConfigOpts, *, transport, placement: PlacementClient,
                        driver: VirtDriver | None = None,
                        driver_for: Callable[[str], VirtDriver] | None = None,
                        conductor: CellConductorAPI | None = None,
                        host: str | None = None, hosts: Sequence[str] | None = None,
                        owns_transport: bool = True) -> ComputeAgent:
    """A compute agent named ``host`` on ``transport`` (its cell's bus), not started.

    Its hosts: ``hosts`` if given, else ``hosted_host_names(host,
    [compute] hosted_hosts)``. Each host gets its own driver from
    ``driver_for(host)``; ``driver`` alone serves an agent of one host.
    """
    name = host or conf.host
    names = list(hosts) if hosts is not None else hosted_host_names(
        name, conf.compute.hosted_hosts)
    if driver_for is None:
        if driver is None or len(names) != 1:
            raise ValueError('build_compute_agent needs driver_for to serve several hosts')
        driver_for = lambda _host: driver  # noqa: E731
    conductor = conductor or CellConductorAPI(transport, conf=conf)
    hollow = len(names) > 1
    hosted: dict[str, HostedHost] = {}
    for host_name in names:
        host_driver = driver_for(host_name)
        # One node per host: the node is named after the host.
        builder = InstanceBuilder(host=host_name, nodename=host_name, driver=host_driver)
        reporter = ResourceReporter(
            host=host_name, nodename=host_name, driver=host_driver, placement=placement,
            conductor=conductor, availability_zone=conf.compute.availability_zone,
            failed_builds=lambda b=builder: b.failed_builds,
            # A hollow agent's hosts are refreshed together (HostReports).
            refresh_interval=None if hollow else conf.compute.placement_refresh_interval,
            extra_traits=frozenset({HOLLOW_HOST_TRAIT}) if hollow else frozenset(),
            cell_trait=cell_trait(conf.cell.name))
        hosted[host_name] = HostedHost(name=host_name, driver=host_driver,
                                       builder=builder, reporter=reporter)
    manager = ComputeManager(hosts=hosted, placement=placement, conductor=conductor,
                             computes=ComputeAPI(transport, conf=conf))
    evacuated = EvacuatedGuests(conductor=conductor, unclaims=manager.unclaims)
    evacuated.expect(hosted.values())
    reports = HostReports(conf, name=name, hosts=hosted, placement=placement,
                          conductor=conductor, evacuated=evacuated)
    # The first report runs at once: the nodes are in Placement and in their
    # cell DB before the scheduler can be expected to choose them.
    resources = PeriodicTask(f'{name}-resources', conf.compute.report_interval,
                             reports.report)
    # Its own thread: a removal may wait as long as the client retries.
    unclaims = PeriodicTask(f'{name}-pending-unclaims', conf.compute.report_interval,
                            manager.unclaims.retry)
    service = Service(conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
                      endpoints=[manager], heartbeat=reports.heartbeat,
                      periodic_tasks=[resources, unclaims], host=name, also_as=names,
                      owns_transport=owns_transport, in_flight=[manager.copies.wait])
    agent = ComputeAgent(name=name, hosts=hosted, service=service, manager=manager,
                         reports=reports)
    agent.apply_stopped_hosts(conf.compute.stopped_hosts)
    service.add_reload_hook('[compute] stopped_hosts',
                            lambda: agent.apply_stopped_hosts(conf.compute.stopped_hosts))
    return agent
