"""A cell whose database stays away: the super conductor writes again, then asks for another cell.

The in-process top level (``harness.TopLevel``) with two cells; the super
conductor is given cell2's database as a PostgreSQL server that refuses
connections (a real refusal: nothing listens on port 1). The scheduler's
first answer is sent to cell2 (its request asks for cell2), the later ones
are its own. Issue 27, item 3.
"""
from __future__ import annotations

import dataclasses
import logging
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db import engines
from cellplane.objects import build_requests
from conductor.super.manager import SuperConductorManager
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestedDestination, RequestSpec
from tests.functional.boot.harness import TopLevel, node_uuid

CELLS = {
    'cell1': {'c1-a': {}, 'c1-b': {}, 'c1-c': {}},
    'cell2': {'c2-a': {}, 'c2-b': {}},
}
REFUSING = 'postgresql+psycopg2://nobody@127.0.0.1:1/cell2'
WRITE_RETRY_SECONDS = 0.6


@pytest.fixture
def top(tmp_path):
    harness = TopLevel(tmp_path, CELLS)
    harness.flavor('whole-host', vcpus=8, memory_mb=1024, root_gb=10)
    # The scheduler maps the hosts it reads (the super conductor leaves a cell out by them).
    harness.refresher.refresh()
    yield harness
    harness.close()


class _Cell2Away:
    """The cells as the super conductor sees them, cell2's database refusing connections."""

    def __init__(self, cells, cell2_uuid: str) -> None:
        self._cells = cells
        self._cell2 = cell2_uuid
        self.refusing = engines.create_engine(REFUSING, connect_timeout=2)

    def mapping(self, cell_uuid):
        return self._cells.mapping(cell_uuid)

    def engine(self, cell_uuid):
        return self.refusing if cell_uuid == self._cell2 else self._cells.engine(cell_uuid)


class _FirstIntoCell2:
    """The real scheduler; its first request is asked for cell2. Keeps every spec it was sent."""

    def __init__(self, scheduler, cell2_uuid: str) -> None:
        self._scheduler = scheduler
        self._cell2 = cell2_uuid
        self.specs = []

    def select_destinations(self, ctxt, spec, uuids, num_alternates):
        if not self.specs:
            spec = dataclasses.replace(
                spec, requested_destination=RequestedDestination(cell_uuid=self._cell2))
        self.specs.append(spec)
        return self._scheduler.select_destinations(ctxt, spec, uuids, num_alternates)


def _boot(top, count: int, name: str) -> tuple[RequestSpec, list[Instance]]:
    spec = RequestSpec(flavor=Flavor(name='whole-host', vcpus=8, memory_mb=1024,
                                     root_gb=10), project_id='proj', user_id='alice',
                       num_instances=count)
    asked = [Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='alice',
                      flavor=spec.flavor, display_name=f'{name}-{i}') for i in range(count)]
    build_requests.record(top.api_engine, asked, spec)
    return spec, asked


def _manager(top, scheduler, cells):
    return SuperConductorManager(
        api_engine=top.api_engine, cells=cells, scheduler=scheduler,
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3,
        cell_write_retry_timeout=WRITE_RETRY_SECONDS)


def test_instances_a_cell_cannot_take_are_placed_in_another_cell(top, caplog):
    cell2 = top.cells['cell2'].uuid
    scheduler = _FirstIntoCell2(top.scheduler_api, cell2)
    cells = _Cell2Away(top.cell_dbs, cell2)
    spec, asked = _boot(top, 2, 'moved')
    caplog.set_level(logging.WARNING)

    _manager(top, scheduler, cells).schedule_and_build_instances(
        new_context(), spec, [i.uuid for i in asked])

    top.recorder.wait_for(lambda: len(top.recorder.builds) == 2, 'both builds cast')
    assert {top.cell_of_host(b.host) for b in top.recorder.builds} == {'cell1'}
    first, again = scheduler.specs
    assert first.ignore_hosts == []
    assert again.ignore_hosts == ['c2-a', 'c2-b']
    assert again.num_instances == 2
    # The request's own spec reaches the cell, not the narrowed one.
    assert {tuple(b.request_spec.ignore_hosts) for b in top.recorder.builds} == {()}
    # Each instance holds one claim, on the cell1 host it is built on (cell2's were removed).
    for build in top.recorder.builds:
        held = top.placement.get_allocations(build.instance.uuid).allocations
        assert list(held) == [node_uuid(build.host)]
    moved = [r for r in caplog.records if 'asking the scheduler again' in r.getMessage()]
    assert len(moved) == 1 and 'Connection refused' in moved[0].getMessage()
    cells.refusing.dispose()


def test_an_instance_no_other_cell_takes_fails_naming_the_database_and_leaves_no_claim(top):
    cell1, cell2 = top.cells['cell1'].uuid, top.cells['cell2'].uuid
    # cell1 filled first (one whole-host instance per host).
    fill_spec, fill = _boot(top, 3, 'fill')
    fill_spec = dataclasses.replace(
        fill_spec, requested_destination=RequestedDestination(cell_uuid=cell1))
    _manager(top, top.scheduler_api, top.cell_dbs).schedule_and_build_instances(
        new_context(), fill_spec, [i.uuid for i in fill])
    top.recorder.wait_for(lambda: len(top.recorder.builds) == 3, 'cell1 filled')

    cells = _Cell2Away(top.cell_dbs, cell2)
    spec, (instance,) = _boot(top, 1, 'stranded')
    _manager(top, _FirstIntoCell2(top.scheduler_api, cell2), cells) \
        .schedule_and_build_instances(new_context(), spec, [instance.uuid])

    request = build_requests.get(top.api_engine, instance.uuid)
    assert request.failed
    assert request.fault_message.startswith(
        'could not create the instance in cell cell2: its database did not answer for ')
    assert 'Connection refused' in request.fault_message
    assert '; asked the scheduler for another cell: NoValidHost' in request.fault_message
    assert top.placement.get_allocations(instance.uuid).allocations == {}
    assert len(top.recorder.builds) == 3
    with top.cell_engines['cell1'].connect() as conn:
        assert conn.execute(sa.text('SELECT count(*) FROM instances')).scalar() == 3
    cells.refusing.dispose()
