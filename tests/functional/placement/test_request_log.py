"""Placement logs each request as the reference's request log does: method, path, status, time, request id.

Issue 28, finding 6: Placement wrote no request log.
"""
from __future__ import annotations

import logging
import re

REQUEST_ID = 'req-12345678-1234-1234-1234-123456789abc'
LINE = re.compile(r'^(?P<addr>\S+) "(?P<method>\S+) (?P<path>\S+)" status: (?P<status>\d+) '
                  r'len: (?P<len>\d+) microversion: (?P<mv>\S+) time: (?P<time>\d+\.\d{3}) '
                  r'request_id: (?P<rid>\S+)$')


def _logged(caplog) -> list[dict]:
    lines = [r.getMessage() for r in caplog.records if r.name == 'placement.requestlog']
    matched = [LINE.match(line) for line in lines]
    assert all(matched), lines
    return [m.groupdict() for m in matched]


def test_each_request_is_one_info_line_with_its_request_id(client, caplog):
    caplog.set_level(logging.INFO, logger='placement.requestlog')
    ok = client.get('/resource_providers?name=c1', mv='1.39',
                    headers={'X-OpenStack-Request-Id': REQUEST_ID})
    missing = client.get('/resource_providers/9d3b1c1e-0000-4000-8000-000000000000')
    [first, second] = _logged(caplog)
    assert (first['method'], first['path'], first['status'], first['mv'], first['rid']) == \
        ('GET', '/resource_providers?name=c1', '200', '1.39', REQUEST_ID)
    assert int(first['len']) == len(ok.body)
    assert (second['status'], second['rid']) == \
        ('404', missing.headers['x-openstack-request-id'])
    assert all(r.levelname == 'INFO' for r in caplog.records
               if r.name == 'placement.requestlog')


def test_a_refused_request_is_logged_and_the_healthcheck_is_not(client, caplog):
    caplog.set_level(logging.INFO, logger='placement.requestlog')
    assert client.get('/healthcheck', token=None, mv=None,
                      headers={'accept': 'text/plain'}).status_int == 200
    assert client.get('/resource_providers', token=None).status_int == 401
    [refused] = _logged(caplog)
    assert (refused['path'], refused['status']) == ('/resource_providers', '401')
