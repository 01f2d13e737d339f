"""A move asks Placement for the hosts of its own cell only (the cell trait, cellplane/traits.py).

Two cells of three hosts on the embedded control plane, whose agents have
``[cell] name``. Without the trait in the query, a move's candidates came
from every cell, and RequestedDestinationFilter removed the other cell's:
when a random window held none of the move's cell, the move was scheduled a
second time over every host.
"""
from __future__ import annotations

import pytest

from cellplane.context import new_context
from cellplane.objects import flavors, migrations, scheduling_records
from cellplane_api import moves, servers
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from tests.support.polling import eventually

CELL_TRAITS = {'cell1': 'CUSTOM_CELL_CELL1', 'cell2': 'CUSTOM_CELL_CELL2'}


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    with EmbeddedCloud(tmp_path_factory.mktemp('cell-trait'),
                       CloudPlan.uniform(cells=2, hosts_per_cell=3)) as c:
        flavors.create(c.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
        yield c


def _cell_uuid(cloud, name: str) -> str:
    return next(m.uuid for m in cloud.cells.enabled() if m.name == name)


def _required_traits(record: dict) -> set[str]:
    return {t for key, value in record['placement']['query'] if key == 'required'
            for t in value.split(',')}


def test_every_host_carries_its_cells_trait_in_placement(cloud):
    for name, hosted in cloud.computes.items():
        cell = name.split('-')[0]
        assert CELL_TRAITS[cell] in cloud.placement.get_traits(hosted.node_uuid), name


def test_the_scheduler_knows_each_cells_trait_from_its_hosts_records(cloud):
    eventually(lambda: all(cloud.host_cache.cell_trait(_cell_uuid(cloud, cell)) == trait
                           for cell, trait in CELL_TRAITS.items()),
               'every cell trait known to the scheduler')


def test_a_move_asks_for_its_cells_hosts_and_a_boot_for_every_cell(cloud):
    eventually(lambda: cloud.host_cache.cell_trait(_cell_uuid(cloud, 'cell1')),
               'the cell trait known')
    [uuid] = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                            name='mover', flavor='small', project_id='p', user_id='u')
    server = eventually(lambda: (lambda s: s if s.status == servers.ACTIVE else None)(
        servers.show(cloud.api_engine, cloud.cells, uuid)), 'server ACTIVE')
    cell = server.host.split('-')[0]
    asked = moves.migrate(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                          uuid)
    migration = eventually(lambda: (lambda m: m if m.status in moves.SETTLED else None)(
        moves.show_migration(cloud.api_engine, cloud.cells, asked.uuid).migration),
        'migration settled')
    assert migration.status in (migrations.FINISHED, migrations.CONFIRMED), migration
    assert migration.dest_host.startswith(f'{cell}-')
    move, boot = scheduling_records.find(cloud.api_engine, instance_uuid=uuid, last=5)
    assert not _required_traits(boot) & set(CELL_TRAITS.values()), boot['placement']
    assert boot['placement']['candidate_hosts'] == 6
    assert CELL_TRAITS[cell] in _required_traits(move), move['placement']
    # Placement offered the three hosts of the cell, and no other.
    assert move['placement']['candidate_hosts'] == 3, move['placement']
    [filtered] = [f for f in move['instances'][0]['filters']
                  if f['filter'] == 'RequestedDestinationFilter']
    assert filtered['removed'] == 0, filtered
