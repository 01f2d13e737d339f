"""The scheduling record of one ``select_destinations`` run, built from its trace.

A record is what an operator reads to see why instances landed where they
did, or failed: the request id, the instance UUIDs, a summary of the request
spec, the Placement query and how many candidates it returned, per filter
the hosts in and out, the best ``weighed_hosts`` weighed hosts per instance
with their weights, every claim attempt, the selections returned and the
milliseconds spent in each stage. ``to_dict()`` is its JSON form; both
backends store exactly that, so both answer with the same shape.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from scheduler.trace import SchedulingTrace

#: Weighed hosts kept per instance in a record, unless configured otherwise.
DEFAULT_WEIGHED_HOSTS = 10


@dataclasses.dataclass(frozen=True)
class SchedulingRecord:
    request_id: str
    created_at: datetime.datetime
    project_id: str
    instance_uuids: tuple[str, ...]
    outcome: str
    # The whole record as JSON-ready data (see ``from_trace``).
    body: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.body

    def for_instance(self, instance_uuid: str) -> dict[str, Any]:
        """What this run decided for one instance, in short (for ``server show``).

        ``{"request_id", "created_at", "outcome", "error", "candidate_hosts",
        "removed_by_filter": {filter: n}, "weighed": [{"host", "weight"}],
        "claims": [{"host", "outcome", "detail", "code"}], "selected": host,
        "alternates": [hosts]}``
        """
        mine = next((i for i in self.body.get('instances', ())
                     if i.get('instance_uuid') == instance_uuid), {})
        selections = mine.get('selections', [])
        return {
            'request_id': self.request_id,
            'created_at': self.created_at.isoformat(),
            'outcome': self.outcome,
            'error': self.body.get('error'),
            'candidate_hosts': self.body.get('placement', {}).get('candidate_hosts'),
            'removed_by_filter': {f['filter']: f['removed'] for f in mine.get('filters', ())
                                  if f.get('removed')},
            'weighed': [{'host': w['host'], 'weight': round(w['weight'], 4)}
                        for w in mine.get('weighed', ())],
            'claims': [{'host': c['host'], 'outcome': c['outcome'], 'detail': c['detail'],
                        'code': c.get('code', '')} for c in mine.get('claims', ())],
            'selected': next((s['host'] for s in selections if s.get('claimed')), None),
            'alternates': [s['host'] for s in selections if not s.get('claimed')],
        }

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> 'SchedulingRecord':
        """A record from its JSON form (as both backends store it)."""
        return cls(request_id=body.get('request_id') or '',
                   created_at=datetime.datetime.fromisoformat(body['created_at']),
                   project_id=body.get('project_id') or '',
                   instance_uuids=tuple(body.get('instance_uuids') or ()),
                   outcome=body.get('outcome') or '', body=body)

    @classmethod
    def from_trace(cls, trace: SchedulingTrace, *,
                   weighed_hosts: int = DEFAULT_WEIGHED_HOSTS) -> 'SchedulingRecord':
        """The record of ``trace``, keeping the best ``weighed_hosts`` per instance."""
        created_at = (datetime.datetime.fromtimestamp(trace.started_at, datetime.timezone.utc)
                      if trace.started_at else datetime.datetime.now(datetime.timezone.utc))
        created_at = created_at.replace(tzinfo=None)
        instances = []
        for instance in trace.instances:
            instances.append({
                'instance_uuid': instance.instance_uuid,
                'hosts_in': instance.hosts_in,
                'filters': [{'filter': f.filter, 'hosts_in': f.hosts_in,
                             'hosts_out': f.hosts_out, 'removed': f.removed,
                             'reasons': dict(f.reasons), 'rejected': dict(f.rejected)}
                            for f in instance.filters],
                'weighed_count': instance.weighed_count,
                # Spelled out rather than dataclasses.asdict: about 8 times
                # cheaper, and this runs once per scheduler run.
                'weighed': [{'host': w.host, 'nodename': w.nodename,
                             'compute_node_uuid': w.compute_node_uuid,
                             'weight': w.weight, 'parts': dict(w.parts)}
                            for w in instance.weighed[:weighed_hosts]],
                'claims': [{'host': c.host, 'nodename': c.nodename,
                            'compute_node_uuid': c.compute_node_uuid,
                            'outcome': c.outcome, 'detail': c.detail, 'code': c.code}
                           for c in instance.claims],
                'gave_up': instance.gave_up,
                'selections': [{'host': h.host, 'nodename': h.nodename,
                                'compute_node_uuid': h.compute_node_uuid,
                                'cell_uuid': h.cell_uuid, 'claimed': h.claimed}
                               for h in instance.selections],
            })
        body = {
            'request_id': trace.request_id,
            'created_at': created_at.isoformat(),
            'project_id': trace.project_id,
            'instance_uuids': list(trace.instance_uuids
                                   or [i.instance_uuid for i in trace.instances]),
            'request': dict(trace.request),
            'num_alternates': trace.num_alternates,
            'placement': {'query': [list(p) for p in trace.query],
                          'microversion': trace.placement_microversion,
                          'allocation_requests': trace.allocation_requests,
                          'candidate_hosts': trace.candidate_hosts,
                          'unknown_providers': list(trace.unknown_providers),
                          'shortage': list(trace.shortage),
                          'shortage_limits': list(trace.shortage_limits),
                          'batch_claim': trace.batch_claim,
                          'batch_claim_refusal': trace.batch_claim_refusal},
            'instances': instances,
            'outcome': trace.outcome,
            'error': trace.error,
            'rolled_back': list(trace.rolled_back),
            'stage_ms': {k: round(v, 3) for k, v in trace.stage_ms.items()},
        }
        return cls.from_dict(body)
