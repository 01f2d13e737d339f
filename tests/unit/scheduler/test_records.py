"""Scheduling records: built from a real run's trace, written by the jsonlines
backend (rotation, finding) and queued by the writer (never blocking, counting drops)."""
from __future__ import annotations

import json
import threading

import pytest

from scheduler.destinations import DestinationSelector
from scheduler.host_cache import HostStateCache
from scheduler.plugins import load_filters
from scheduler.records.backend import RecordBackend, RecordBackendError, RecordQuery
from scheduler.records.jsonlines import JsonLinesBackend
from scheduler.records.record import SchedulingRecord
from scheduler.records.writer import RecordWriter
from scheduler.trace import SchedulingTrace
from scheduler.weighers.ram import RAMWeigher
from tests.unit.scheduler.factories import FakePlacement, flavor, record, spec


def _run(capacity_mb=None, instances=('i-1',), num_alternates=1):
    capacity_mb = capacity_mb or {'a': 4096, 'b': 3584, 'c': 3072}
    placement = FakePlacement(capacity_mb)
    cache = HostStateCache()
    cache.set_records([record(n) for n in capacity_mb])
    selector = DestinationSelector(
        candidate_source=placement, claimer=placement, cache=cache,
        filters=load_filters(['ComputeFilter', 'ResourceFitFilter']),
        weighers=[RAMWeigher(1.0)], max_results=100)
    trace = selector.select_destinations(
        spec(flavor=flavor(vcpus=0, memory_mb=512, root_gb=0)), list(instances),
        num_alternates).trace
    trace.request_id = 'req-1'
    return trace


def _trace(request_id: str, instance: str) -> SchedulingTrace:
    trace = SchedulingTrace(project_id='p', num_instances=1, num_alternates=0,
                            request_id=request_id, instance_uuids=[instance])
    trace.outcome = 'selected'
    return trace


def test_record_holds_query_filters_weights_claims_selections_and_stage_times():
    body = SchedulingRecord.from_trace(_run(), weighed_hosts=2).to_dict()
    assert body['request_id'] == 'req-1' and body['instance_uuids'] == ['i-1']
    assert body['request']['flavor']['memory_mb'] == 512
    assert body['placement']['candidate_hosts'] == 3
    assert body['placement']['query'] == [['resources', 'MEMORY_MB:512'],
                                          ['required', '!COMPUTE_STATUS_DISABLED'],
                                          ['limit', '100']]
    (instance,) = body['instances']
    assert [(f['filter'], f['hosts_in'], f['hosts_out']) for f in instance['filters']] == [
        ('ComputeFilter', 3, 3), ('ResourceFitFilter', 3, 3)]
    # Only the best two weighed hosts are kept, though three were weighed.
    assert instance['weighed_count'] == 3
    assert [w['host'] for w in instance['weighed']] == ['a', 'b']
    assert [(c['host'], c['outcome']) for c in instance['claims']] == [('a', 'claimed')]
    assert [(s['host'], s['claimed']) for s in instance['selections']] == [
        ('a', True), ('b', False)]
    assert set(body['stage_ms']) >= {'placement_candidates', 'filters', 'claims'}
    json.dumps(body)  # JSON as it is


def test_record_for_one_instance_shows_its_choice_and_alternates():
    record_ = SchedulingRecord.from_trace(_run(
        {'a': 4096, 'b': 3900, 'c': 1024}, instances=('i-1', 'i-2')))
    # i-1 took 512 MB of a, so b is the emptiest for i-2, a its alternate.
    assert record_.for_instance('i-1')['selected'] == 'a'
    mine = record_.for_instance('i-2')
    assert mine['selected'] == 'b' and mine['alternates'] == ['a']
    assert mine['request_id'] == 'req-1' and mine['outcome'] == 'selected'


def test_jsonlines_finds_by_request_and_instance_newest_first(tmp_path):
    backend = JsonLinesBackend(str(tmp_path / 'records.jsonl'), max_bytes=1 << 20, backups=2)
    backend.write([SchedulingRecord.from_trace(_trace(f'req-{n}', f'i-{n % 2}'))
                   for n in range(5)])
    assert [r.request_id for r in backend.find(RecordQuery(request_id='req-3'))] == ['req-3']
    assert [r.request_id for r in backend.find(RecordQuery(instance_uuid='i-0'))] == [
        'req-4', 'req-2', 'req-0']
    assert [r.request_id for r in backend.find(RecordQuery(last=2))] == ['req-4', 'req-3']
    backend.close()


def test_jsonlines_rotates_by_size_keeps_the_backups_and_still_finds_old_records(tmp_path):
    path = tmp_path / 'records.jsonl'
    backend = JsonLinesBackend(str(path), max_bytes=1024, backups=2)
    for n in range(40):
        backend.write([SchedulingRecord.from_trace(_trace(f'req-{n}', 'i'))])
    backend.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'records.jsonl', 'records.jsonl.1', 'records.jsonl.2']
    for p in tmp_path.iterdir():
        # A file is rotated once it passes max_bytes: it ends within one line of it.
        assert p.stat().st_size < 1024 + 600, p
    found = backend.find(RecordQuery(last=1000))
    assert found[0].request_id == 'req-39'
    assert len(found) < 40  # the oldest went with the third rotation
    numbers = [int(r.request_id.split('-')[1]) for r in found]
    assert numbers == sorted(numbers, reverse=True)
    # Records kept in the first backup are still found by request id.
    oldest_kept = found[-1].request_id
    assert backend.find(RecordQuery(request_id=oldest_kept))[0].request_id == oldest_kept


def test_jsonlines_without_a_file_names_the_option():
    with pytest.raises(RecordBackendError, match=r'\[scheduler\] records_file'):
        JsonLinesBackend('', max_bytes=1024, backups=1)


class _GatedBackend(RecordBackend):
    """Writes only when the gate opens: a backend slower than the scheduler."""

    def __init__(self):
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.written: list[SchedulingRecord] = []

    @classmethod
    def from_conf(cls, conf):
        return cls()

    def write(self, records):
        self.entered.set()
        self.gate.wait(10)
        self.written.extend(records)

    def find(self, query):
        return []


def test_writer_never_blocks_drops_and_counts_when_full_then_writes_the_rest():
    backend = _GatedBackend()
    writer = RecordWriter(backend, queue_size=3)
    assert writer.submit(_trace('req-first', 'i'))
    # The thread is now stuck in the backend: only the queue (3) takes more.
    assert backend.entered.wait(10)
    accepted = [writer.submit(_trace(f'req-{n}', 'i')) for n in range(10)]
    assert accepted == [True] * 3 + [False] * 7
    assert writer.dropped == 7
    backend.gate.set()
    writer.close()
    assert writer.written == len(backend.written) == 4
    assert [r.request_id for r in backend.written] == ['req-first', 'req-0', 'req-1', 'req-2']


def test_writer_writes_records_arriving_together_in_batches_not_one_by_one():
    backend = _GatedBackend()
    backend.gate.set()
    calls = []
    original = backend.write
    backend.write = lambda records: (calls.append(len(records)), original(records))
    writer = RecordWriter(backend, queue_size=100)
    for n in range(20):
        writer.submit(_trace(f'req-{n}', 'i'))
    writer.close()
    assert sum(calls) == 20
    assert len(calls) < 20, calls


class _BrokenBackend(_GatedBackend):
    def write(self, records):
        raise OSError('disk full')


def test_writer_survives_a_failing_backend_and_counts_the_lost_records():
    writer = RecordWriter(_BrokenBackend(), queue_size=10)
    for n in range(3):
        writer.submit(_trace(f'req-{n}', 'i'))
    writer.close()
    assert (writer.written, writer.failed) == (0, 3)
