"""The cell trait (cellplane/traits.py): its name, the agent's use of it, the scheduler's."""
from __future__ import annotations

import pytest

from cellplane.traits import CELL_TRAIT_STAT, cell_trait
from compute_agent.resource_reporter import FAILED_BUILDS_STAT, ResourceReporter
from compute_agent.virt.fake import FakeDriver, FakeSettings
from rpc_schemas.request_spec import RequestedDestination
from scheduler.candidates_query import build_query
from scheduler.host_cache import HostStateCache
from tests.unit.compute_agent.test_hosted_hosts import _Placement
from tests.unit.scheduler.factories import CELL1, CELL2, record, spec


@pytest.mark.parametrize('name, trait', [
    ('cell1', 'CUSTOM_CELL_CELL1'),
    ('eu-west.rack 7', 'CUSTOM_CELL_EU_WEST_RACK_7'),
    (' cell2 ', 'CUSTOM_CELL_CELL2'),
    ('eu--west__2', 'CUSTOM_CELL_EU_WEST_2'),   # os_traits.normalize_name: a run is one _
])
def test_a_cell_name_becomes_a_custom_trait_placement_accepts(name, trait):
    assert cell_trait(name) == trait


@pytest.mark.parametrize('name', [None, '', '   '])
def test_no_cell_name_no_trait(name):
    assert cell_trait(name) is None


def test_a_long_name_is_cut_to_placements_limit():
    assert len(cell_trait('x' * 400)) == 255


def test_the_agent_puts_the_trait_on_its_provider_and_names_it_in_its_node_record():
    placement = _Placement()
    reporter = ResourceReporter(host='h', nodename='h', driver=FakeDriver(FakeSettings()),
                                placement=placement, conductor=None,
                                extra_traits=frozenset({'CUSTOM_HOLLOW_HOST'}),
                                cell_trait='CUSTOM_CELL_CELL1')
    reporter.sync_placement(absent=True)
    assert placement.traits == {'CUSTOM_HOLLOW_HOST', 'CUSTOM_CELL_CELL1'}
    assert reporter.node_record().stats == {FAILED_BUILDS_STAT: 0,
                                            CELL_TRAIT_STAT: 'CUSTOM_CELL_CELL1'}


def test_an_agent_without_a_cell_name_reports_as_before():
    placement = _Placement()
    reporter = ResourceReporter(host='h', nodename='h', driver=FakeDriver(FakeSettings()),
                                placement=placement, conductor=None)
    reporter.sync_placement(absent=True)
    assert not any(t.startswith('CUSTOM_CELL_') for t in placement.traits)
    assert reporter.node_record().stats == {FAILED_BUILDS_STAT: 0}


def _with_trait(name: str, cell: str, trait):
    return record(name, cell=cell, stats={} if trait is None else {CELL_TRAIT_STAT: trait})


def test_the_scheduler_takes_a_cells_trait_only_when_every_host_of_it_names_it():
    cache = HostStateCache()
    cache.set_records([
        _with_trait('a1', CELL1, 'CUSTOM_CELL_A'), _with_trait('a2', CELL1, 'CUSTOM_CELL_A'),
        # An agent not restarted since: its host's provider may lack the trait.
        _with_trait('b1', CELL2, 'CUSTOM_CELL_B'), _with_trait('b2', CELL2, None),
    ])
    assert cache.cell_trait(CELL1) == 'CUSTOM_CELL_A'
    assert cache.cell_trait(CELL2) is None
    assert cache.cell_trait('a cell with no host') is None


def test_hosts_of_one_cell_naming_two_traits_leave_the_cell_to_the_filters():
    cache = HostStateCache()
    cache.set_records([_with_trait('a1', CELL1, 'CUSTOM_CELL_A'),
                       _with_trait('a2', CELL1, 'CUSTOM_CELL_OTHER'),
                       _with_trait('a3', CELL1, ['not', 'a', 'name'])])
    assert cache.cell_trait(CELL1) is None


def test_the_cell_trait_is_required_in_the_candidates_query():
    moving = spec(requested_destination=RequestedDestination(cell_uuid=CELL1))
    params = dict(build_query(moving, cell_trait='CUSTOM_CELL_A').to_params())
    assert params['required'] == 'CUSTOM_CELL_A,!COMPUTE_STATUS_DISABLED'
    assert dict(build_query(moving).to_params())['required'] == '!COMPUTE_STATUS_DISABLED'
