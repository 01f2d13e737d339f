"""What the super conductor tells the cell of a request's server group, read from a migrated (SQLite) API database."""
from __future__ import annotations

import pytest

from cellplane.db import engines, migrate
from cellplane.objects import failure_domains, server_group_places, server_groups
from conductor.super.group_places import with_places
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import InstanceGroup, RequestSpec


@pytest.fixture
def api(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/api.sqlite')
    migrate.sync('api', engine)
    failure_domains.record_levels(engine, ['rack'])
    yield engine
    engine.dispose()


def _spec(group=None):
    return RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=512, root_gb=1),
                       project_id='p', user_id='u', instance_group=group)


def test_the_cell_gets_every_member_the_request_s_own_included_and_their_places(api):
    group = server_groups.create(api, project_id='p', user_id='u', name='web',
                                 policy='anti-affinity', level='rack')
    with api.begin() as conn:
        server_groups.add_members(conn, group.uuid, ['old', 'new-1', 'new-2'])
    assert server_group_places.hold(api, 'old', 'r2', 1)
    assert server_group_places.hold(api, 'new-1', 'r1', 1)
    sent = with_places(api, _spec(InstanceGroup(uuid=group.uuid, policy='anti-affinity',
                                                level='rack')))
    # new-2, rescheduled, must keep the policy with its sibling new-1 too.
    assert sent.instance_group.members == ['old', 'new-1', 'new-2']
    assert sent.instance_group.domains == ['r1', 'r2']


def test_a_spec_without_a_group_is_sent_as_it_is(api):
    spec = _spec()
    assert with_places(api, spec) is spec
