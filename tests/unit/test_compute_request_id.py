"""ComputeRequestId (plain WSGI) answers as oslo.middleware's RequestId does, with Nova's compat header."""
from __future__ import annotations

import pytest
import webob
from oslo_middleware import request_id

from cellplane_api import deploy

CALLERS = 'req-11111111-2222-3333-4444-555555555555'


class OsloRequestId(request_id.RequestId):
    compat_headers = ['x-compute-request-id']


def _app(extra_headers):
    def app(environ, start_response):
        start_response('200 OK', [('Content-Type', 'text/plain'), *extra_headers])
        return [f'{environ["openstack.request_id"]} '
                f'{environ.get("openstack.global_request_id", "-")}'.encode()]
    return app


@pytest.mark.parametrize('inbound', [None, CALLERS, 'not-a-request-id'])
@pytest.mark.parametrize('extra_headers', [[], [('X-Compute-Request-Id', 'the-app-set-it')]])
def test_the_same_ids_and_headers_as_oslo_middleware(inbound, extra_headers):
    headers = {} if inbound is None else {'X-OpenStack-Request-ID': inbound}
    answers = []
    for middleware in (OsloRequestId, deploy.ComputeRequestId):
        resp = webob.Request.blank('/v2.1/servers', headers=headers).get_response(
            middleware(_app(extra_headers)))
        own, global_id = resp.body.decode().split()
        assert own.startswith('req-') and own != inbound
        assert resp.headers['x-openstack-request-id'] == own
        # What the answer carries, with this request's own id written as OWN.
        answers.append((resp.status, global_id, sorted(
            (k.lower(), 'OWN' if v == own else v) for k, v in resp.headerlist)))
    assert answers[0] == answers[1]
    assert answers[1][1] == (CALLERS if inbound == CALLERS else '-')
