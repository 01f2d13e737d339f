"""select_destinations over a real oslo.messaging transport (kombu in-memory, payloads copied).

The manager runs a DestinationSelector on a fake Placement; what is checked
is the RPC edge: payloads serialized both ways, NoValidHost arriving at the
caller as NoValidHost with the scheduler's explanation, bad arguments refused.
"""
from __future__ import annotations

import uuid

import pytest
from oslo_config import cfg
from prometheus_client import REGISTRY

from cellplane import conf as shared_conf
from cellplane.context import RequestContext
from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport
from placement.client import PlacementUnreachable
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from scheduler import conf as scheduler_conf
from scheduler.errors import InvalidSchedulingRequest, NoValidHost
from scheduler.host_cache import HostStateCache
from scheduler.manager import SchedulerManager
from scheduler.rpcapi import SchedulerAPI
from tests.unit.scheduler.factories import FakePlacement, record


@pytest.fixture
def conf():
    conf = cfg.ConfigOpts()
    shared_conf.register_opts(conf)
    scheduler_conf.register_opts(conf)
    conf([], default_config_files=[], default_config_dirs=[])
    return conf


@pytest.fixture
def scheduler(conf):
    """(client, placement, traces): a scheduler server on its own topic."""
    placement = FakePlacement({'a': 4096, 'b': 2048})
    cache = HostStateCache()
    cache.set_records([record('a'), record('b')])
    traces = []
    manager = SchedulerManager.from_conf(conf, candidate_source=placement,
                                         claimer=placement, cache=cache,
                                         on_trace=traces.append)
    transport = get_transport('kombu+memory:////')
    topic = f'scheduler-test-{uuid.uuid4().hex[:8]}'
    server = build_server(transport, topic=topic, server='sched-1', endpoints=[manager])
    server.start()

    class Client(SchedulerAPI):
        TOPIC = topic
    yield Client(transport, conf=conf, timeout=30), placement, traces
    server.stop()
    server.wait()
    transport.cleanup()


def _spec(memory_mb=512):
    return RequestSpec(flavor=Flavor(name='f', vcpus=0, memory_mb=memory_mb),
                       project_id='proj', user_id='user')


def test_selections_cross_the_wire_as_payloads(scheduler):
    client, placement, traces = scheduler
    (selections,) = client.select_destinations(RequestContext(), _spec(), ['i-1'], 1)
    assert all(isinstance(s, Selection) for s in selections)
    assert [s.service_host for s in selections] == ['a', 'b']
    assert placement.allocations == {'i-1': ('rp-a', 512)}
    assert traces[-1].outcome == 'selected'


def test_no_valid_host_reaches_the_caller_with_the_explanation(scheduler):
    client, placement, traces = scheduler
    with pytest.raises(NoValidHost, match='Placement returned no allocation candidates'):
        client.select_destinations(RequestContext(), _spec(memory_mb=9000), ['i-1'], 0)
    assert traces[-1].outcome == 'no valid host'


def test_bad_arguments_are_refused_as_invalid_scheduling_request(scheduler):
    client, _, _ = scheduler
    with pytest.raises(InvalidSchedulingRequest, match='num_alternates'):
        client.select_destinations(RequestContext(), _spec(), ['i-1'], -1)
    with pytest.raises(InvalidSchedulingRequest, match='twice'):
        client.select_destinations(RequestContext(), _spec(), ['i-1', 'i-1'], 0)


def _rpc_count(outcome: str) -> float:
    return REGISTRY.get_sample_value(
        'cellplane_rpc_messages_total',
        {'method': 'select_destinations', 'outcome': outcome}) or 0.0


def test_no_valid_host_is_counted_refused_and_placement_away_an_error(scheduler, monkeypatch):
    # Issue 28, finding 6: every NoValidHost was counted as an RPC error.
    client, placement, _ = scheduler
    before = {o: _rpc_count(o) for o in ('refused', 'error', 'handled')}
    with pytest.raises(NoValidHost):
        client.select_destinations(RequestContext(), _spec(memory_mb=9000), ['i-1'], 0)
    with pytest.raises(InvalidSchedulingRequest):
        client.select_destinations(RequestContext(), _spec(), ['i-1'], -1)

    def away(query):
        raise PlacementUnreachable('placement at http://placement unreachable')
    monkeypatch.setattr(placement, 'allocation_candidates', away)
    with pytest.raises(Exception, match='unreachable'):
        client.select_destinations(RequestContext(), _spec(), ['i-2'], 0)
    after = {o: _rpc_count(o) for o in before}
    assert {o: after[o] - before[o] for o in before} == \
        {'refused': 2, 'error': 1, 'handled': 0}
