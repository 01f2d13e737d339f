"""Host aggregates from the API database reach the scheduler: extra specs and zones.

Real SQLite API and cell databases, the host refresher the daemon runs, and
the in-process Placement; aggregates are made with ``cellplane.objects.aggregates``
as the ``cellplane aggregate`` commands do.
"""
from __future__ import annotations

import datetime
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from cellplane.cells.databases import CellDatabases
from cellplane.db import engines, migrate
from cellplane.db.cell.models import compute_nodes, services
from cellplane.objects import aggregates, cell_mappings
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import RequestSpec
from scheduler.destinations import DestinationSelector
from scheduler.errors import NoValidHost
from scheduler.host_aggregates import read_host_aggregates
from scheduler.host_cache import HostStateCache
from scheduler.host_refresher import HostRefresher
from scheduler.placement_adapter import PlacementAdapter
from scheduler.plugins import load_filters
from scheduler.weighers.ram import RAMWeigher
from tests.functional.scheduler.conftest import add_compute_node

HOSTS = ('h1', 'h2', 'h3', 'h4')
FILTERS = ['ComputeFilter', 'ResourceFitFilter', 'AggregateInstanceExtraSpecsFilter',
           'AvailabilityZoneFilter']


def _node_uuid(host: str) -> str:
    # The provider UUID add_compute_node gives the same name.
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, host))


@pytest.fixture
def api(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/api.sqlite')
    migrate.sync('api', engine)
    yield engine
    engine.dispose()


@pytest.fixture
def cells(tmp_path, api):
    """One cell whose four hosts all say, in their own config, zone az1."""
    url = f'sqlite:///{tmp_path}/cell1.sqlite'
    engine = engines.create_engine(url)
    migrate.sync('cell', engine)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    with engine.begin() as conn:
        for host in HOSTS:
            conn.execute(compute_nodes.insert().values(
                uuid=_node_uuid(host), host=host, nodename=host, vcpus=16,
                memory_mb=4096, local_gb=100, availability_zone='az1', stats={}))
            conn.execute(services.insert().values(
                host=host, binary='cellplane-compute', last_seen_at=now))
    engine.dispose()
    cell_mappings.create(api, name='cell1', transport_url='memory://cell1',
                    database_connection=url)
    databases = CellDatabases(api)
    yield databases
    databases.dispose()


@pytest.fixture
def refresher(cells):
    cache = HostStateCache()
    refresher = HostRefresher(cache, cells, service_down_time=60, interval=3600)
    refresher.reload_cells()
    return refresher


def _grouped(api):
    """fast: ssd=true on h1, h2; zone2: az2 on h2, h3; h4 in no aggregate."""
    aggregates.create(api, 'fast', properties={'ssd': 'true'})
    aggregates.create(api, 'zone2', zone='az2', properties={'ssd': 'false,sata'})
    for name, host in (('fast', 'h1'), ('fast', 'h2'), ('zone2', 'h2'), ('zone2', 'h3')):
        aggregates.add_host(api, name, host)


def _records(refresher):
    return {r.host: r for r in refresher._cache.records()}


def _selector(placement, refresher):
    adapter = PlacementAdapter(placement)
    return DestinationSelector(candidate_source=adapter, claimer=adapter,
                               cache=refresher._cache, filters=load_filters(FILTERS),
                               weighers=[RAMWeigher(-1.0)], max_results=50)


def _spec(extra_specs=None, **kwargs):
    return RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=512, root_gb=10,
                                     extra_specs=extra_specs or {}),
                       project_id='proj', user_id='user', **kwargs)


def _placed_and_alternates(result):
    (selections,) = result.selections
    return selections[0].service_host, {s.service_host for s in selections}


@pytest.fixture
def nodes(placement):
    for host in HOSTS:
        add_compute_node(placement, host)


def test_refresh_hangs_each_hosts_aggregates_on_its_records_in_one_query(api, refresher):
    _grouped(api)
    statements = []
    sa.event.listen(api, 'before_cursor_execute',
                    lambda conn, cursor, statement, *rest: statements.append(statement))
    refresher.refresh()
    selects = [s for s in statements if s.lstrip().upper().startswith('SELECT')
               and 'aggregate_hosts' in s]
    assert len(selects) == 1  # one read of the aggregates for four hosts

    records = _records(refresher)
    assert [a.name for a in records['h2'].aggregates] == ['fast', 'zone2']
    assert records['h2'].aggregates[1].metadata == {'availability_zone': 'az2',
                                                    'ssd': 'false,sata'}
    assert [a.name for a in records['h1'].aggregates] == ['fast']
    assert records['h4'].aggregates == ()
    # The same aggregate is one object for all its hosts.
    assert records['h1'].aggregates[0] is records['h2'].aggregates[0]


def test_aggregate_changes_reach_the_cache_at_the_next_refresh(api, refresher):
    _grouped(api)
    refresher.refresh()
    aggregates.remove_host(api, 'fast', 'h1')
    aggregates.set_metadata(api, 'fast', properties={'ssd': 'nvme'})
    assert [a.name for a in _records(refresher)['h1'].aggregates] == ['fast']
    refresher.refresh()
    records = _records(refresher)
    assert records['h1'].aggregates == ()
    assert records['h2'].aggregates[0].metadata == {'ssd': 'nvme'}


def test_unreadable_aggregates_keep_those_read_before(api, refresher):
    _grouped(api)
    refresher.refresh()
    with api.begin() as conn:
        conn.exec_driver_sql('ALTER TABLE aggregate_hosts RENAME TO gone')
    with pytest.raises(sa.exc.OperationalError):
        read_host_aggregates(api)
    refresher.refresh()
    assert [a.name for a in _records(refresher)['h2'].aggregates] == ['fast', 'zone2']


def test_flavor_asking_aggregate_metadata_lands_only_on_hosts_of_such_aggregates(
        api, refresher, placement, nodes):
    _grouped(api)
    refresher.refresh()
    flavor_specs = {'aggregate_instance_extra_specs:ssd': 'true'}
    result = _selector(placement, refresher).select_destinations(
        _spec(flavor_specs), [str(uuidlib.uuid4())], 3)
    placed, passing = _placed_and_alternates(result)
    assert placed in {'h1', 'h2'}
    assert passing == {'h1', 'h2'}
    # Any of a comma-separated aggregate value matches.
    result = _selector(placement, refresher).select_destinations(
        _spec({'aggregate_instance_extra_specs:ssd': 'sata'}), [str(uuidlib.uuid4())], 3)
    assert _placed_and_alternates(result)[1] == {'h2', 'h3'}


def test_no_host_in_a_matching_aggregate_is_no_valid_host_naming_the_filter(
        api, refresher, placement, nodes):
    _grouped(api)
    aggregates.remove_host(api, 'fast', 'h1')
    aggregates.remove_host(api, 'fast', 'h2')
    refresher.refresh()
    instance = str(uuidlib.uuid4())
    with pytest.raises(NoValidHost) as raised:
        _selector(placement, refresher).select_destinations(
            _spec({'aggregate_instance_extra_specs:ssd': 'true'}), [instance], 3)
    assert 'AggregateInstanceExtraSpecsFilter' in str(raised.value)
    assert placement.get_allocations(instance).allocations == {}


def test_zone_request_lands_only_on_hosts_whose_aggregate_says_that_zone(
        api, refresher, placement, nodes):
    _grouped(api)
    refresher.refresh()
    # Every node says az1 itself; the aggregate puts h2 and h3 in az2.
    result = _selector(placement, refresher).select_destinations(
        _spec(availability_zone='az2'), [str(uuidlib.uuid4())], 3)
    placed, passing = _placed_and_alternates(result)
    assert placed in {'h2', 'h3'}
    assert passing == {'h2', 'h3'}
    result = _selector(placement, refresher).select_destinations(
        _spec(availability_zone='az1'), [str(uuidlib.uuid4())], 3)
    assert _placed_and_alternates(result)[1] == {'h1', 'h4'}
