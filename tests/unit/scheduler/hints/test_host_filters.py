"""The host hints' filters: DifferentHostFilter and SameHostFilter, each answer with its reason."""
from __future__ import annotations

from scheduler.hints import different_host_filter as different_host
from scheduler.hints import same_host_filter as same_host
from tests.unit.scheduler.factories import host, scheduling_request, spec


def _check(host_filter, host_state, request_spec=None, **request_overrides):
    return host_filter.check(host_state, scheduling_request(request_spec, **request_overrides))


def test_different_host_rejects_the_host_of_a_named_instance():
    f = different_host.DifferentHostFilter()
    request_spec = spec(scheduler_hints={'different_host': ['i-1']})
    located = {'instance_hosts': {'i-1': 'h1'}}
    assert _check(f, host('h1'), request_spec, **located).reason == \
        different_host.RUNS_HINTED_INSTANCE
    assert _check(f, host('h2'), request_spec, **located) is None


def test_same_host_keeps_only_the_host_of_a_named_instance():
    f = same_host.SameHostFilter()
    request_spec = spec(scheduler_hints={'same_host': ['i-1', 'i-2']})
    located = {'instance_hosts': {'i-1': 'h1', 'i-2': 'h3'}}
    assert _check(f, host('h1'), request_spec, **located) is None
    assert _check(f, host('h3'), request_spec, **located) is None
    assert _check(f, host('h2'), request_spec, **located).reason == \
        same_host.LACKS_HINTED_INSTANCE


def test_same_host_with_instances_that_cannot_be_located_rejects_every_host():
    f = same_host.SameHostFilter()
    request_spec = spec(scheduler_hints={'same_host': ['i-gone']})
    for name in ('h1', 'h2'):
        assert _check(f, host(name), request_spec).reason == same_host.LACKS_HINTED_INSTANCE


def test_same_host_without_the_hint_passes():
    assert _check(same_host.SameHostFilter(), host('h1')) is None
