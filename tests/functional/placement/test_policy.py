"""Policy (403): Placement's rules for each route, legacy and secure
defaults, a policy file's overrides, and how a refusal reads."""
from __future__ import annotations

import pytest

from placement import handler
from tests.functional.placement.conftest import error, placement_conf

PROJECT = {'x-project-id': 'p1'}
SERVICE = {'x-roles': 'service', **PROJECT}
ADMIN = {'x-roles': 'admin', **PROJECT}
MEMBER = {'x-roles': 'member,reader', **PROJECT}


def _client(make_client, *, legacy: bool = False, policy_file: str | None = None):
    oslo_policy = {'enforce_new_defaults': not legacy}
    if policy_file:
        oslo_policy['policy_file'] = policy_file
    return make_client(conf=placement_conf(api={'auth_strategy': 'noauth2'},
                                           oslo_policy=oslo_policy))


def test_a_refusal_names_the_rule_in_placements_error_format(client):
    resp = client.get('/resource_providers', token='user', headers=MEMBER)
    assert resp.status_int == 403
    err = error(resp)
    assert err['title'] == 'Forbidden'
    assert err['code'] == 'placement.undefined_code'
    assert 'Policy does not allow placement:resource_providers:list to be performed.' \
        in err['detail']
    assert err['request_id'] == resp.headers['x-openstack-request-id']


@pytest.mark.parametrize('headers,status', [(ADMIN, 403), (SERVICE, 200)])
def test_reshaper_is_the_service_roles_under_the_new_defaults(make_client, headers, status):
    resp = _client(make_client).post('/reshaper', {}, token='user', headers=headers)
    # 400: the (empty) body is refused after the policy let it through.
    assert resp.status_int == (400 if status == 200 else 403), resp.text


def test_legacy_defaults_also_accept_the_admin_for_the_service_rule(make_client):
    resp = _client(make_client, legacy=True).post('/reshaper', {}, token='user',
                                                  headers=ADMIN)
    assert resp.status_int == 400, resp.text


def test_legacy_defaults_still_refuse_a_project_member(make_client):
    resp = _client(make_client, legacy=True).get('/resource_providers', token='user',
                                                 headers=MEMBER)
    assert resp.status_int == 403


@pytest.mark.parametrize('legacy', [False, True])
def test_a_project_reader_reads_only_its_own_usages(make_client, legacy):
    c = _client(make_client, legacy=legacy)
    reader = {'x-roles': 'reader', 'x-project-id': 'p1'}
    own = c.get('/usages?project_id=p1', token='user', headers=reader)
    assert own.status_int == 200, own.text
    assert own.json == {'usages': {}}
    assert c.get('/usages?project_id=p2', token='user', headers=reader).status_int == 403


def test_every_route_is_guarded_by_a_rule(client):
    enforcer = client.app.placement.enforcer
    for template, methods in handler.ROUTES.items():
        for method in methods:
            rule = enforcer.rule_for(method, template)
            assert (rule is None) == (template in ('', '/')), (method, template)


def test_a_policy_file_overrides_a_default(make_client, tmp_path):
    path = tmp_path / 'policy.yaml'
    path.write_text('"placement:resource_providers:list": "role:member"\n'
                    '"placement:resource_providers:create": "!"\n')
    c = _client(make_client, policy_file=str(path))
    assert c.get('/resource_providers', token='user', headers=MEMBER).status_int == 200
    assert c.get('/resource_providers', token='user', headers=ADMIN).status_int == 403
    assert c.post('/resource_providers', {'name': 'x'}, token='admin').status_int == 403
    # Rules the file does not name keep their defaults.
    assert c.get('/traits', token='admin').status_int == 200


def test_an_open_policy_lets_any_user_in(make_client, tmp_path):
    """The reference's OpenPolicyFixture: every rule '@'."""
    from placement import policies
    path = tmp_path / 'policy.yaml'
    path.write_text(''.join(f'"{r.name}": "@"\n' for r in policies.list_rules()
                            if r.name != 'admin_api'))
    c = _client(make_client, policy_file=str(path))
    resp = c.post('/resource_providers', {'name': 'cn1'}, token='user')
    assert resp.status_int == 200, resp.text


def test_a_changed_policy_file_takes_effect(tmp_path):
    import os
    import time

    from oslo_context import context as oslo_context

    from placement import errors, policy
    path = tmp_path / 'policy.yaml'
    path.write_text('"placement:traits:list": "role:member"\n')
    enforcer = policy.PolicyEnforcer(
        placement_conf(oslo_policy={'policy_file': str(path)}), decision_ttl=0)
    member = oslo_context.RequestContext(user_id='u', project_id='p1', roles=['member'])
    enforcer.authorize('GET', '/traits', member)
    path.write_text('"placement:traits:list": "!"\n')
    later = time.time() + 10   # a newer mtime, however coarse the file system's clock
    os.utime(path, (later, later))
    with pytest.raises(errors.Forbidden):
        enforcer.authorize('GET', '/traits', member)
