"""``cellplane scheduler records``: the scheduling records, found by request or instance.

Reads the backend ``[scheduler] record_backend`` names, from the same
top-level config file as the scheduler (``database``: the API database;
``jsonlines``: ``records_file``, so run it where the scheduler writes).
Newest first. The table shows one line per record; ``--format json`` adds
each whole record (request summary, Placement query, filters, weights,
claims, selections, stage times).
"""
from __future__ import annotations

import contextlib

from cliff import lister

from cellplane_cli import base
from scheduler import conf as scheduler_conf
from scheduler.records.backend import RecordQuery
from scheduler.records.loading import load_backend
from scheduler.records.record import SchedulingRecord

RECORD_COLUMNS = ('created_at', 'request_id', 'outcome', 'instances', 'candidates',
                  'selected', 'total_ms', 'error')


class RecordsNotKept(Exception):
    """``[scheduler] record_backend = none``: there are no records to show."""


@contextlib.contextmanager
def record_backend(conf):
    """The configured backend, closed afterwards; RecordsNotKept for ``none``."""
    backend = load_backend(conf)
    if backend is None:
        raise RecordsNotKept('[scheduler] record_backend = none: the scheduler '
                             'keeps no scheduling records')
    try:
        yield backend
    finally:
        backend.close()


def selected_hosts(record: SchedulingRecord) -> list[str]:
    """The host each instance got, in instance order (claimed ones only)."""
    return [s['host'] for i in record.body.get('instances', ())
            for s in i.get('selections', ()) if s.get('claimed')]


def record_row(record: SchedulingRecord, *, with_body: bool) -> tuple:
    body = record.body
    row = (base.iso8601(record.created_at, timespec='milliseconds'), record.request_id, record.outcome,
           ', '.join(record.instance_uuids),
           body.get('placement', {}).get('candidate_hosts'),
           ', '.join(selected_hosts(record)),
           round(sum(body.get('stage_ms', {}).values()), 1), body.get('error'))
    return row + (body,) if with_body else row


class SchedulerRecords(base.SaysWhatItFound, base.ConfigOptionsMixin, lister.Lister):
    """Scheduling records, newest first: why instances landed where they did, or failed."""

    nothing = 'no scheduling records match'
    registrars = (scheduler_conf.register_opts,)

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        parser.add_argument('--last', type=base.bounded(int, minimum=1), default=20,
                            metavar='N',
                            help='at most N records (default 20)')
        parser.add_argument('--request-id', metavar='R', help='only the request R')
        parser.add_argument('--instance', metavar='ID',
                            help='only records about instance ID')
        return parser

    def take_action(self, parsed_args):
        conf = self.load_config(parsed_args)
        query = RecordQuery(last=parsed_args.last, request_id=parsed_args.request_id,
                            instance_uuid=parsed_args.instance)
        with record_backend(conf) as backend:
            found = backend.find(query)
        with_body = parsed_args.formatter == 'json'
        columns = RECORD_COLUMNS + (('record',) if with_body else ())
        return columns, [record_row(r, with_body=with_body) for r in found]


COMMANDS = {'scheduler records': SchedulerRecords}
