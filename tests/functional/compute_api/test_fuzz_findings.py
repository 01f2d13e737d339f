"""The inputs the compute API's fuzz test (``test_fuzz_routes.py``) found answered wrongly, pinned.

Each test is one request hypothesis produced, as it produced it, and the
answer the API gives since its fix.
"""
from __future__ import annotations

import pytest

from tests.functional.compute_api.harness import ComputeCloud

ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('fuzz-findings'), cells=1, hosts_per_cell=1)
    yield cloud
    cloud.stop()


def test_a_query_parameter_named_by_a_line_break_is_quoted_on_one_line(api):
    # GET /os-scheduling-records?%0A= : the message named the parameter with its
    # line break, so Nova's one-line message spanned two.
    answer = api.request('GET', '/v2.1/os-scheduling-records?%0A=', token=ADMIN)
    assert answer.status == 400
    assert answer.json == {'badRequest': {'code': 400, 'message': (
        'Invalid input for query parameters \\n: not one of limit, request_id, '
        'instance_uuid.')}}
