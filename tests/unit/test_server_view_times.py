"""The times of a detailed server document as Nova writes them: ``created``/``updated`` to the
second with a ``Z``; ``OS-SRV-USG:launched_at`` with its microseconds (six digits, also when
they are 0) and no offset, the stored wall time whether or not it carries a tzinfo."""
from __future__ import annotations

import datetime
import types

from cellplane_api import microversion, servers
from cellplane_api.request import ComputeRequest
from cellplane_api.views import servers as views

UTC = datetime.timezone.utc


def _doc(created, updated, launched) -> dict:
    req = ComputeRequest.blank('/v2.1/servers/detail')
    req.mv = microversion.Version(2, 69)
    req.services = types.SimpleNamespace(default_zone='nova')
    server = servers.Server(uuid='u1', name='web', status='ACTIVE', task_state=None,
                            flavor='small', cell='cell1', host='h1', node='h1', fault=None,
                            created_at=created, updated_at=updated, launched_at=launched)
    [doc] = views.details(req, [server], views.Viewer())
    assert doc == views.detail(req, server, views.Viewer())
    return doc


def test_times_with_and_without_microseconds_or_tzinfo():
    doc = _doc(datetime.datetime(2026, 11, 27, 10, 0, 5),
               datetime.datetime(2026, 11, 27, 10, 0, 6, 123456, tzinfo=UTC),
               datetime.datetime(2026, 11, 27, 10, 0, 7))
    assert doc['created'] == '2026-11-27T10:00:05Z'
    assert doc['updated'] == '2026-11-27T10:00:06Z'
    assert doc['OS-SRV-USG:launched_at'] == '2026-11-27T10:00:07.000000'
    doc = _doc(datetime.datetime(2026, 11, 27, 10, 0, 5, 999999), None,
               datetime.datetime(2026, 11, 27, 10, 0, 7, 42, tzinfo=UTC))
    assert doc['created'] == doc['updated'] == '2026-11-27T10:00:05Z'
    assert doc['OS-SRV-USG:launched_at'] == '2026-11-27T10:00:07.000042'
    doc = _doc(None, None, datetime.datetime(2026, 11, 27, 10, 0, 7, 5))
    assert doc['created'] == '1970-01-01T00:00:00Z'
    assert doc['OS-SRV-USG:launched_at'] == '2026-11-27T10:00:07.000005'
