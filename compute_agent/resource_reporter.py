"""What a compute agent tells Placement and its cell conductor about its node, periodically.

At start and every ``[compute] report_interval``:

* Placement: the node's resource provider exists (created with the
  nodename as its name), its inventory and traits are the virt driver's
  (but ``cellplane.traits.OPERATOR_TRAITS``, kept where it finds them).
  They are read first and written only when they differ, so a report does
  not bump the provider generation (which would make concurrent claims
  retry); every write goes through the client's generation-checked retry.
  Once in sync, Placement is read again only when the driver's view
  changes or every ``[compute] placement_refresh_interval`` seconds (for
  the hosts of a hollow agent, from one list of their providers: see
  ``compute_agent/wiring.py``).
* The cell conductor: the node's ``ComputeNodeRecord`` (cast), which it
  upserts into the cell DB's ``compute_nodes``.

The node UUID (the provider's and the compute node row's) is derived, not
stored: uuid5 of a fixed cellplane namespace and ``host`` + ``nodename``.
The same host always reports the same UUID, across restarts and on a
reinstalled machine, with no state file to lose; a host renamed is a new node.
"""
from __future__ import annotations

import dataclasses
import logging
import random
import time
import uuid

from cellplane.context import new_context
from cellplane.traits import CELL_TRAIT_STAT, OPERATOR_TRAITS
from compute_agent.virt.driver import VirtDriver
from conductor.cell.rpcapi import CellConductorAPI
from placement.client import PlacementClient, Provider
from rpc_schemas.compute_node import ComputeNodeRecord

LOG = logging.getLogger(__name__)

# Fixed forever: changing it would give every node a new provider.
NODE_UUID_NAMESPACE = uuid.UUID('6f1c9a52-3f0e-5b7c-9d1e-c311b0a7e5d4')
FAILED_BUILDS_STAT = 'failed_builds'   # as scheduler/host_state.py reads it


@dataclasses.dataclass(frozen=True)
class NewProvider:
    """A provider just created with its traits, its inventory still to write."""

    uuid: str
    generation: int
    inventory: dict          # resource class -> Placement's inventory fields
    traits: frozenset[str]


def compute_node_uuid(host: str, nodename: str) -> str:
    """The stable UUID of ``nodename`` on ``host``."""
    return str(uuid.uuid5(NODE_UUID_NAMESPACE, f'{host}\n{nodename}'))


class ResourceReporter:
    """Reports one node of one host; ``report()`` is the periodic task's body."""

    def __init__(self, *, host: str, nodename: str, driver: VirtDriver,
                 placement: PlacementClient, conductor: CellConductorAPI,
                 availability_zone: str | None = None,
                 failed_builds=lambda: 0, refresh_interval: float | None = 0,
                 extra_traits: frozenset[str] = frozenset(),
                 cell_trait: str | None = None,
                 clock=time.monotonic) -> None:
        self.host = host
        self.nodename = nodename
        self.node_uuid = compute_node_uuid(host, nodename)
        self.availability_zone = availability_zone
        self._driver = driver
        self._placement = placement
        self._conductor = conductor
        self._failed_builds = failed_builds
        self._refresh_interval = refresh_interval
        # The cell's trait (cellplane/traits.py) is put on the provider with
        # the others, and named in the node record for the scheduler.
        self._cell_trait = cell_trait
        self._extra_traits = frozenset(extra_traits) | ({cell_trait} if cell_trait else set())
        self._clock = clock
        # What Placement was last seen or made to hold, and when it was read.
        self._synced: tuple[dict, frozenset[str]] | None = None
        self._verify_after = 0.0
        # The provider's generation when it was last seen or made to hold
        # that: a refresh finding it unchanged needs no more reads.
        self._generation: int | None = None

    def report(self) -> ComputeNodeRecord:
        """Bring Placement up to date, then send the node record to the cell conductor."""
        self.sync_placement()
        record = self.node_record()
        self._conductor.compute_node_update(new_context(), record)
        return record

    def sync_placement(self, *, force: bool = False, absent: bool = False,
                       listed: Provider | None = None) -> list[str]:
        """Provider, inventory, traits; the names of what had to be written.

        ``absent``: the caller saw no provider of this node (its agent
        listed them at start), so it is created without being looked up.
        ``listed``: the provider as the caller's list of them showed it just
        now: a refresh from it, without a request when it is at the
        generation this reporter left it (a hollow agent refreshes its hosts
        so, from one list, every ``placement_refresh_interval``; its
        reporters' own ``refresh_interval`` is None: never by themselves).

        Placement is read only when the driver's inventory or traits changed
        since the last sync, or when ``refresh_interval`` seconds passed
        (0: every time), or with ``force``: a thousand idle hosts then cost
        Placement nothing between refreshes. The refreshes of many hosts are
        spread over the interval, not made at once. A refresh that finds the
        provider at the generation this reporter last left it (nothing
        written to it since: no inventory, trait or allocation change) reads
        nothing more: one request, not three, per host and interval.
        """
        wanted, traits = self._wanted()
        now = self._clock()
        if (not force and listed is None and self._synced == (wanted, traits)
                and (self._refresh_interval is None or now < self._verify_after)):
            return []
        unchanged = self._synced == (wanted, traits)
        written = self._write_differences(
            wanted, traits, absent=absent, listed=listed,
            generation_seen=self._generation if unchanged and not force else None)
        self._mark_synced(wanted, traits)
        return written

    def create_new_provider(self) -> NewProvider | None:
        """A new host's provider and traits; its inventory is left to the caller.

        For an agent that saw no provider of this node (it listed them at
        start) and writes the inventories of its new hosts many per request
        (``PlacementClient.set_many_inventories``), then calls
        ``inventory_written`` (or ``write_inventory`` for those it could
        not): two requests per new host instead of three. None if the
        provider was created by another writer meanwhile and holds
        something already: the caller syncs it as usual (``sync_placement``).
        """
        wanted, traits = self._wanted()
        provider = self._placement.create_provider(self.node_uuid, self.nodename)
        if provider.generation != 0:
            return None
        generation = provider.generation
        if traits:
            generation = self._placement.set_traits(self.node_uuid, traits,
                                                    generation=generation)
        return NewProvider(self.node_uuid, generation, wanted, traits)

    def write_inventory(self, new: NewProvider) -> list[str]:
        """The inventory of a provider ``create_new_provider`` made, alone; what was written."""
        generation = self._placement.set_inventory(self.node_uuid, new.inventory,
                                                   generation=new.generation)
        return self.inventory_written(new, generation)

    def inventory_written(self, new: NewProvider, generation: int) -> list[str]:
        """The inventory of ``new`` is in Placement, at ``generation``: this host is in sync."""
        self._generation = generation
        self._mark_synced(new.inventory, new.traits)
        written = ['provider', 'inventory', *(['traits'] if new.traits else [])]
        LOG.info('Resource provider %s (%s) updated in Placement: %s',
                 self.node_uuid, self.nodename, ', '.join(written))
        return written

    def _wanted(self) -> tuple[dict, frozenset[str]]:
        wanted = {rc: inv.as_placement() for rc, inv in self._driver.get_inventory().items()}
        return wanted, frozenset(self._driver.get_traits()) | self._extra_traits

    def _mark_synced(self, wanted: dict, traits: frozenset[str]) -> None:
        self._synced = (wanted, traits)
        if self._refresh_interval is not None:
            # The first refresh of each host falls at a random point of the
            # interval, so that the hosts of one agent do not refresh together.
            spread = (random.uniform(0, self._refresh_interval) if self._verify_after == 0
                      else self._refresh_interval)
            self._verify_after = self._clock() + spread

    def _write_differences(self, wanted: dict, traits: frozenset[str], *,
                           absent: bool = False, listed: Provider | None = None,
                           generation_seen: int | None = None) -> list[str]:
        written = []
        provider = listed if listed is not None or absent else self._placement.get_provider(
            self.node_uuid)
        if provider is not None and provider.generation == generation_seen:
            return []
        if provider is None:
            provider = self._placement.create_provider(self.node_uuid, self.nodename)
            written.append('provider')
        # Generation 0: nothing written to it yet (just created; or created by
        # another writer since it was listed, and still empty). Otherwise its
        # inventory and traits are read before they are written.
        created = provider.generation == 0
        # Each write is sent at the generation the last answer gave (a
        # conflict reads it again): no read of the provider before each.
        generation = provider.generation
        current = {} if created else {
            rc: inv.as_body() for rc, inv in self._placement.get_inventory(self.node_uuid).items()}
        if wanted != current:
            generation = self._placement.set_inventory(self.node_uuid, wanted,
                                                       generation=generation)
            written.append('inventory')
        present = frozenset() if created else self._placement.get_traits(self.node_uuid)
        # The operator's, not the driver's: a disabled host stays disabled.
        traits = traits | (present & OPERATOR_TRAITS)
        if traits != present:
            generation = self._placement.set_traits(self.node_uuid, traits,
                                                    generation=generation)
            written.append('traits')
        self._generation = generation
        if written:
            LOG.info('Resource provider %s (%s) updated in Placement: %s',
                     self.node_uuid, self.nodename, ', '.join(written))
        return written

    def node_record(self) -> ComputeNodeRecord:
        inventory = self._driver.get_inventory()

        def total(rc: str) -> int:
            return inventory[rc].total if rc in inventory else 0

        def ratio(rc: str) -> float:
            return inventory[rc].allocation_ratio if rc in inventory else 1.0

        return ComputeNodeRecord(
            uuid=self.node_uuid, host=self.host, nodename=self.nodename,
            vcpus=total('VCPU'), memory_mb=total('MEMORY_MB'), local_gb=total('DISK_GB'),
            cpu_allocation_ratio=ratio('VCPU'), ram_allocation_ratio=ratio('MEMORY_MB'),
            disk_allocation_ratio=ratio('DISK_GB'),
            availability_zone=self.availability_zone,
            stats={FAILED_BUILDS_STAT: self._failed_builds(),
                   **({CELL_TRAIT_STAT: self._cell_trait} if self._cell_trait else {})})
