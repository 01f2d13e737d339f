"""NoValidHost's text names the claims a failed multi-create rolled back, summarised when many."""
from __future__ import annotations

from scheduler.errors import NoValidHost
from scheduler.trace import InstanceTrace, SchedulingTrace


def _error(rolled_back: list[str]) -> str:
    trace = SchedulingTrace(request_id='req-1', project_id='p', num_instances=len(rolled_back) + 1,
                            num_alternates=2)
    trace.candidate_hosts = 2
    trace.rolled_back = rolled_back
    instance = InstanceTrace(instance_uuid='last')
    return str(NoValidHost.for_instance(trace, instance, len(rolled_back), len(rolled_back) + 1))


def test_a_few_rolled_back_claims_are_all_named():
    text = _error(['u1', 'u2', 'u3', 'u4'])
    assert text.endswith('claims already made for this request were removed (u1, u2, u3, u4)')


def test_many_rolled_back_claims_are_counted_not_listed():
    uuids = [f'{i:036d}' for i in range(120)]
    text = _error(uuids)
    assert text.endswith(f'were removed (120 instances: {uuids[0]}, {uuids[1]}, {uuids[2]} '
                         'and 117 more; the scheduling record lists them all)')
    assert len(text) < 600
