"""boot_bench's wait over the real scheduler and super conductor (in-memory buses, SQLite).

The instances NoValidHost leaves as failed build requests in the API
database end the wait with their count and reason (the poll once read the
cells only, and waited without end); instances that never become final
stop it after the stall time.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cellplane.context import new_context
from cellplane_api import servers
from tests.functional.boot.harness import TopLevel

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / 'benchmarks'))

import boot_bench  # benchmarks/ is not a package: found through sys.path
import progress

CELLS = {'cell1': {'c1-a': {}}, 'cell2': {'c2-a': {}}}


@pytest.fixture
def top(tmp_path):
    harness = TopLevel(tmp_path, CELLS)
    yield harness
    harness.close()


def _create(top, count: int, flavor: str) -> list[str]:
    return servers.create(top.api_engine, top.conductor_api, new_context(),
                          name='bench', flavor=flavor, count=count, project_id='proj',
                          user_id='alice')


def test_instances_no_host_can_take_end_the_wait_counted_with_their_reason(top):
    top.flavor('huge', vcpus=64, memory_mb=1024, root_gb=10)
    uuids = _create(top, 3, 'huge')
    watch = progress.Progress(len(uuids), stall_seconds=30)
    with pytest.raises(progress.BenchmarkStopped) as stopped:
        boot_bench.wait_final(list(top.cell_engines.values()), top.api_engine, uuids, watch,
                              poll_seconds=0.05)
    said = str(stopped.value).splitlines()
    assert said[0] == '0 of 3 instances ACTIVE, 3 in ERROR, 0 neither'
    # The first member found no host; the others were not placed because of it.
    assert len(said) == 3
    assert said[1].startswith('2 instances NoValidHost: no valid host: not placed, as the '
                              'request places all its instances or none')
    assert said[2].startswith('1 instance NoValidHost: no valid host')
    assert 'no allocation candidates' in said[2]


def test_instances_that_never_become_final_stop_the_wait_after_the_stall_time(top):
    top.flavor('small')
    uuids = _create(top, 2, 'small')
    # The harness's compute agents record the build and never report it done.
    top.recorder.wait_for(lambda: len(top.recorder.builds) == 2, '2 builds cast')
    watch = progress.Progress(len(uuids), stall_seconds=0.5)
    with pytest.raises(progress.BenchmarkStopped,
                       match=r'no instance became final for 0.5 s: stopped.\n'
                             r'0 of 2 instances ACTIVE, 0 in ERROR, 2 neither'):
        boot_bench.wait_final(list(top.cell_engines.values()), top.api_engine, uuids, watch,
                              poll_seconds=0.05)
