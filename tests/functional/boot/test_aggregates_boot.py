"""Host aggregates through the whole boot flow: API role, super conductor, scheduler daemon's defaults.

Aggregates are made as ``cellplane aggregate`` makes them; the scheduler runs
with its default filters, and picks them up at its next host refresh.
"""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db.cell.models import instances
from cellplane.objects import aggregates, build_requests, flavors
from cellplane_api import servers
from tests.functional.boot.harness import TopLevel

CELLS = {
    'cell1': {'c1-a': {}, 'c1-b': {}},
    'cell2': {'c2-a': {}, 'c2-b': {}},
}


@pytest.fixture
def top(tmp_path):
    harness = TopLevel(tmp_path, CELLS)
    yield harness
    harness.close()


def _create(top, *, flavor, count, **kwargs):
    return servers.create(top.api_engine, top.conductor_api, new_context(), name='web',
                          flavor=flavor, count=count, project_id='proj', user_id='alice',
                          **kwargs)


def test_zone_and_aggregate_metadata_steer_every_instance(top):
    aggregates.create(top.api_engine, 'edge', zone='az2')
    aggregates.add_host(top.api_engine, 'edge', 'c1-b')
    aggregates.add_host(top.api_engine, 'edge', 'c2-a')
    aggregates.create(top.api_engine, 'fast', zone='az3', properties={'ssd': 'true'})
    aggregates.add_host(top.api_engine, 'fast', 'c2-b')
    top.refresher.refresh()
    top.flavor('small')
    flavors.create(top.api_engine, name='ssd', vcpus=1, memory_mb=512, root_gb=10,
                   extra_specs={'aggregate_instance_extra_specs:ssd': 'true'})

    in_zone = _create(top, flavor='small', count=4, availability_zone='az2')
    on_ssd = _create(top, flavor='ssd', count=2)
    top.recorder.wait_for(lambda: len(top.recorder.builds) == 6, '6 builds cast')

    hosts = {b.instance.uuid: b.host for b in top.recorder.builds}
    assert {hosts[u] for u in in_zone} == {'c1-b', 'c2-a'}
    assert {hosts[u] for u in on_ssd} == {'c2-b'}
    # Alternates obey the same filters.
    for build in top.recorder.builds:
        allowed = {'c1-b', 'c2-a'} if build.instance.uuid in in_zone else {'c2-b'}
        assert {s.service_host for s in build.host_list} <= allowed
    # An instance that asked for no zone is recorded in its host's: the aggregate's.
    with top.cell_engines['cell2'].connect() as conn:
        zones = dict(conn.execute(sa.select(instances.c.uuid, instances.c.availability_zone)
                                  .where(instances.c.uuid.in_(on_ssd))).all())
    assert zones == {u: 'az3' for u in on_ssd}


def test_a_flavor_no_aggregate_matches_fails_naming_the_filter(top):
    aggregates.create(top.api_engine, 'slow', properties={'ssd': 'false'})
    aggregates.add_host(top.api_engine, 'slow', 'c1-a')
    top.refresher.refresh()
    flavors.create(top.api_engine, name='ssd', vcpus=1, memory_mb=512, root_gb=10,
                   extra_specs={'aggregate_instance_extra_specs:ssd': 'true'})
    [uuid] = _create(top, flavor='ssd', count=1)
    top.wait_until(lambda: build_requests.get_many(top.api_engine, [uuid])[uuid].failed,
                   'the build request marked failed')
    [server] = servers.list_servers(top.api_engine, top.cell_dbs)
    assert server.status == 'ERROR'
    assert 'NoValidHost' in server.fault
    assert 'AggregateInstanceExtraSpecsFilter' in server.fault
    assert top.recorder.builds == []
