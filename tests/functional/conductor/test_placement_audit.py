"""The Placement audit over a running embedded control plane: leaks found and fixed, the reverse healed.

Leaks are planted by hand, each as a real failure would leave it: an
allocation whose consumer never existed, a deleted instance that kept its
claim, an ACTIVE instance whose claim was removed.
"""
from __future__ import annotations

import socket
import time
import uuid as uuidlib

import pytest

from cellplane.context import new_context
from cellplane.db import engines
from cellplane.objects import cell_mappings, flavors, instances, migrations
from cellplane_api import servers
from cellplane_cli import manage
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from conductor.super import placement_audit
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance_update import InstanceUpdate

DEADLINE_SECONDS = 30


@pytest.fixture
def cloud(tmp_path):
    with EmbeddedCloud(tmp_path / 'state', CloudPlan.uniform(cells=1, hosts_per_cell=2)) as c:
        yield c


def _boot(cloud, count: int, extra_specs: dict[str, str] | None = None) -> list[servers.Server]:
    flavors.create(cloud.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1,
                   extra_specs=extra_specs)
    uuids = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                           name='vm', flavor='small', count=count, project_id='p',
                           user_id='u')
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        found = servers.list_servers(cloud.api_engine, cloud.cells, uuids)
        if all(s.status == servers.ACTIVE for s in found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


def test_audit_finds_each_kind_of_disagreement_and_fix_repairs_them(cloud):
    kept, deleted, unclaimed = _boot(cloud, 3)
    node = next(iter(cloud.placement.get_allocations(kept.uuid).allocations))
    stray = str(uuidlib.uuid4())
    cloud.placement.claim(stray, {node: {'VCPU': 1}}, project_id='p', user_id='u')
    with cloud.cell_engines['cell1'].begin() as conn:
        instances.apply_update(conn, InstanceUpdate(instance_uuid=deleted.uuid,
                                                    vm_state='deleted'))
    cloud.placement.unclaim(unclaimed.uuid)

    found = placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement, grace=0)
    by_consumer = {f.consumer: f for f in found}
    assert set(by_consumer) == {stray, deleted.uuid, unclaimed.uuid}
    assert by_consumer[stray].kind == placement_audit.LEAKED
    assert by_consumer[stray].reason == 'no instance and no build request has this uuid'
    assert by_consumer[deleted.uuid].kind == placement_audit.LEAKED
    assert by_consumer[deleted.uuid].reason == 'its instance is deleted in cell cell1'
    assert by_consumer[unclaimed.uuid].kind == placement_audit.MISSING
    assert not any(f.fixed for f in found)
    # A long grace period leaves everything just changed alone.
    assert [f.consumer for f in placement_audit.audit(
        cloud.api_engine, cloud.cells, cloud.placement, grace=3600)] == [stray]

    fixed = placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                  grace=0, fix=True)
    assert {f.consumer for f in fixed if f.fixed} == {stray, deleted.uuid, unclaimed.uuid}
    assert cloud.placement.get_allocations(stray).allocations == {}
    assert cloud.placement.get_allocations(deleted.uuid).allocations == {}
    assert cloud.placement.get_allocations(unclaimed.uuid).allocations == {
        unclaimed_node(cloud, unclaimed): {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
    assert placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                 grace=0) == []


def test_fix_claims_again_what_the_scheduler_claimed_for_a_flavor_with_resources_specs(cloud):
    # resources:CLASS=N overrides the flavor's size and N=0 removes a class:
    # the audit must claim what the scheduler claimed, not the bare size.
    server, = _boot(cloud, 1, {'resources:MEMORY_MB': '256', 'resources:DISK_GB': '0'})
    claimed = cloud.placement.get_allocations(server.uuid).allocations
    assert claimed == {unclaimed_node(cloud, server): {'VCPU': 1, 'MEMORY_MB': 256}}
    cloud.placement.unclaim(server.uuid)

    fixed = placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                  grace=0, fix=True)
    assert [(f.consumer, f.kind, f.fixed) for f in fixed] == [
        (server.uuid, placement_audit.MISSING, True)]
    assert cloud.placement.get_allocations(server.uuid).allocations == claimed


def unclaimed_node(cloud, server) -> str:
    return cloud.computes[server.host].node_uuid


def test_the_audit_refuses_when_a_cell_cannot_be_read(tmp_path, capsys):
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    api_url = f'sqlite:///{tmp_path}/api.sqlite'
    conf = tmp_path / 'top.conf'
    conf.write_text(f'[api_database]\nconnection = {api_url}\n'
                    f'[placement]\nendpoint_url = http://127.0.0.1:{port}\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    engine = engines.create_engine(api_url)
    try:
        cell_mappings.create(engine, name='gone', transport_url='fake:///gone',
                             database_connection=f'postgresql+psycopg2://x@127.0.0.1:{port}/x')
    finally:
        engine.dispose()
    capsys.readouterr()
    assert manage.main(['placement', 'audit', '--config-file', str(conf)]) == 1
    err = capsys.readouterr().err
    assert 'cell gone cannot be read (OperationalError: ' in err
    assert 'nothing was audited' in err


def test_the_super_conductors_periodic_audit_removes_a_planted_leak(tmp_path, caplog):
    caplog.set_level('WARNING', logger='conductor.super.placement_audit')
    cloud = EmbeddedCloud(tmp_path / 'state', CloudPlan.uniform(cells=1, hosts_per_cell=1))
    cloud.conf.set_override('placement_audit_interval', 1, group='conductor')
    cloud.conf.set_override('placement_audit_grace', 0, group='conductor')
    with cloud:
        node = cloud.computes['cell1-host1'].node_uuid
        stray = str(uuidlib.uuid4())
        cloud.placement.claim(stray, {node: {'VCPU': 1}}, project_id='p', user_id='u')
        deadline = time.monotonic() + DEADLINE_SECONDS
        while cloud.placement.get_allocations(stray).allocations:
            assert time.monotonic() < deadline, 'the periodic audit never removed the leak'
            time.sleep(0.1)
    assert any(f'Placement audit fixed leaked {stray}' in r.getMessage()
               for r in caplog.records)


# The way to each status along the state machine, from queued.
_PATHS = {
    migrations.QUEUED: [],
    migrations.PRE_MIGRATING: [migrations.PRE_MIGRATING],
    migrations.MIGRATING: [migrations.PRE_MIGRATING, migrations.MIGRATING],
    migrations.FINISHED: [migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.FINISHED],
    migrations.CONFIRMED: [migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.FINISHED,
                           migrations.CONFIRMED],
    migrations.REVERTED: [migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.FINISHED,
                          migrations.REVERTED],
    migrations.ERROR: [migrations.ERROR],
    migrations.DONE: [migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.DONE],
    migrations.FAILED: [migrations.FAILED],
    migrations.CANCELLED: [migrations.PRE_MIGRATING, migrations.MIGRATING,
                           migrations.CANCELLED],
    migrations.COMPLETED: [migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.DONE,
                           migrations.COMPLETED],
}


def test_a_migrations_allocation_is_kept_while_it_moves_and_removed_once_it_ended(cloud):
    """One migration per status holds a source allocation, as a move leaves it; only the ended are orphans."""
    assert set(_PATHS) == set(migrations.STATUSES)
    server, = _boot(cloud, 1)
    node = cloud.computes[server.host].node_uuid
    small = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1)
    by_status = {}
    with cloud.cell_engines['cell1'].begin() as conn:
        for status, path in _PATHS.items():
            made = migrations.create(
                conn, uuid=str(uuidlib.uuid4()), instance_uuid=server.uuid,
                migration_type=migrations.LIVE_MIGRATION, source_host=server.host,
                source_node=server.host, old_flavor=small, new_flavor=small)
            for step in path:
                migrations.advance(conn, made.uuid, step, dest_host='elsewhere',
                                   dest_node='elsewhere')
            by_status[status] = made.uuid
    for consumer in by_status.values():
        cloud.placement.claim(consumer, {node: {'VCPU': 1}}, project_id='p', user_id='u')

    # Just ended: within the grace period, a removal may still be on its way.
    assert placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                 grace=3600) == []
    found = placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement, grace=0)
    ended = {s: u for s, u in by_status.items() if s in migrations.FINAL}
    assert {f.consumer: (f.kind, f.reason) for f in found} == {
        uuid: (placement_audit.LEAKED,
               f'its live-migration (of instance {server.uuid}) ended {status}')
        for status, uuid in ended.items()}
    assert all(f.held == {node: {'VCPU': 1}} and f.cell == 'cell1' for f in found)

    fixed = placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement, grace=0,
                                  fix=True)
    assert {f.consumer for f in fixed if f.fixed} == set(ended.values())
    for status, consumer in by_status.items():
        held = cloud.placement.get_allocations(consumer).allocations
        assert held == ({} if status in migrations.FINAL else {node: {'VCPU': 1}}), status
    assert placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                 grace=0) == []
