"""The compute nodes of every cell as the compute API's hypervisors: node, service, servers, usage.

    found = read(api_engine, cells, timeout)          # every node, cells in name order, ids ascending
    usage = usage_of(placement, node)                  # totals and use, from Placement

A node's totals (``vcpus``, ``memory_mb``, ``local_gb``) are its resource
provider's inventory and what is used its provider's usages, in Placement:
what the scheduler claims against, so the API shows what it decides with.
A provider Placement does not have yet (its node not reported) has the
node's own totals and nothing used. A cell whose database cannot be read
within ``[cells] read_timeout`` is left out, as Nova leaves out a down cell.
"""
from __future__ import annotations

import dataclasses

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.cells.scatter_gather import gather
from cellplane.objects import compute_nodes, instances, services
from cellplane.objects.cell_mappings import CellMapping
from placement.client import PlacementClientError

VCPU, MEMORY_MB, DISK_GB = 'VCPU', 'MEMORY_MB', 'DISK_GB'


@dataclasses.dataclass(frozen=True)
class Hypervisor:
    """One compute node with its host's compute service (None: never reported) and servers."""

    cell: CellMapping
    node: dict
    service: dict | None
    servers: list[dict]


@dataclasses.dataclass(frozen=True)
class Usage:
    vcpus: int
    vcpus_used: int
    memory_mb: int
    memory_mb_used: int
    local_gb: int
    local_gb_used: int


def _read_cell(engine: Engine, mapping: CellMapping) -> list[Hypervisor]:
    rows = {row['host']: row for row in services.list_all(engine)
            if row['binary'] == compute_nodes.COMPUTE_BINARY}
    with engine.connect() as conn:
        placed = instances.placed(conn)
    by_node: dict[tuple, list[dict]] = {}
    for server in placed:
        by_node.setdefault((server['host'], server['node']), []).append(server)
    return [Hypervisor(mapping, node, rows.get(node['host']),
                       by_node.get((node['host'], node['nodename']), []))
            for node in compute_nodes.list_all(engine)]


def read(cells: CellDatabases, timeout: float) -> list[Hypervisor]:
    """Every node of every readable cell: cells by name, then nodes by id."""
    mappings = sorted(cells.reload(), key=lambda m: m.name)
    answers = gather({m.uuid: (lambda m=m: _read_cell(cells.engine(m.uuid), m))
                      for m in mappings}, timeout)
    found = []
    for mapping in mappings:
        answer = answers[mapping.uuid]
        if not isinstance(answer, BaseException):
            found.extend(answer)
    return found


def usage_of(placement, hypervisor: Hypervisor) -> Usage:
    """The node's totals and use from its provider in Placement (PlacementUnreachable propagates)."""
    node = hypervisor.node
    try:
        inventory = placement.get_inventory(node['uuid'])
        used = placement.get_usages(node['uuid'])
    except PlacementClientError as exc:
        if exc.status != 404:
            raise
        inventory, used = {}, {}

    def total(resource_class: str, own: int) -> int:
        found = inventory.get(resource_class)
        return found.total if found is not None else own

    return Usage(vcpus=total(VCPU, node['vcpus']), vcpus_used=int(used.get(VCPU, 0)),
                 memory_mb=total(MEMORY_MB, node['memory_mb']),
                 memory_mb_used=int(used.get(MEMORY_MB, 0)),
                 local_gb=total(DISK_GB, node['local_gb']),
                 local_gb_used=int(used.get(DISK_GB, 0)))
