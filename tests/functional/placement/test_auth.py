"""Who is calling: noauth2 as the reference's tests drive it, and keystone
through keystonemiddleware's own test fixture (its token validation
replaced, everything after it real)."""
from __future__ import annotations

import pytest
from keystoneauth1 import fixture as ks_fixture
from keystonemiddleware import fixture as ksm_fixture

from placement import conf as placement_conf_mod
from tests.functional.placement.conftest import error, placement_conf

# ------------------------------------------------------------- noauth2


def test_noauth2_without_token_is_401(client):
    resp = client.get('/resource_providers', token=None)
    assert resp.status_int == 401
    assert error(resp)['title'] == 'Unauthorized'


@pytest.mark.parametrize('token', ['admin', 'admin:admin', 'admin:some-project'])
def test_noauth2_user_admin_is_an_admin(client, token):
    assert client.get('/resource_providers', token=token).status_int == 200
    assert client.post('/resource_providers', {'name': token}, token=token).status_int == 200


def test_noauth2_other_users_have_no_role_and_are_forbidden(client):
    resp = client.get('/resource_providers', token='user')
    assert resp.status_int == 403
    assert error(resp)['title'] == 'Forbidden'


@pytest.mark.parametrize('roles,status', [
    ('admin', 200), ('service', 200), ('admin,member,reader', 200),
    ('member,reader', 403), ('reader', 403), ('', 403)])
def test_noauth2_roles_come_from_x_roles(client, roles, status):
    resp = client.get('/resource_providers', token='user',
                      headers={'x-roles': roles, 'x-project-id': 'p1'})
    assert resp.status_int == status, resp.text


def test_noauth2_x_roles_wins_over_the_admin_user(client):
    resp = client.get('/resource_providers', token='admin', headers={'x-roles': 'reader'})
    assert resp.status_int == 403


def test_noauth2_system_scope_is_refused_by_project_scoped_rules(client):
    resp = client.get('/resource_providers', token='user', headers={
        'x-roles': 'admin,member,reader', 'openstack-system-scope': 'all'})
    assert resp.status_int == 403


def test_401_comes_before_404_and_405(client):
    assert client.get('/nowhere', token=None).status_int == 401
    assert client.request('PATCH', '/resource_providers', token=None).status_int == 401


def test_403_comes_after_404_and_405(client):
    assert client.get('/nowhere', token='user').status_int == 404
    assert client.request('PATCH', '/resource_providers', token='user').status_int == 405


def test_root_needs_no_token_in_either_strategy(make_client):
    for strategy in ('noauth2', 'keystone'):
        c = make_client(conf=placement_conf(api={'auth_strategy': strategy}))
        assert c.get('/', token=None).status_int == 200


# ------------------------------------------------------------- keystone


@pytest.fixture
def keystone(make_client):
    """A keystone-mode app and the fixture that decides which tokens are valid."""
    fixture = ksm_fixture.AuthTokenFixture()
    fixture.setUp()
    conf = placement_conf(api={'auth_strategy': 'keystone'},
                          keystone_authtoken={'www_authenticate_uri': 'http://keystone.invalid/v3'})
    yield fixture, make_client(conf=conf)
    fixture.cleanUp()


def test_keystone_without_or_with_an_unknown_token_is_401(keystone):
    fixture, client = keystone
    assert client.get('/resource_providers', token=None).status_int == 401
    resp = client.get('/resource_providers', token='not-a-keystone-token')
    assert resp.status_int == 401
    assert resp.headers['WWW-Authenticate'] == 'Keystone uri="http://keystone.invalid/v3"'


@pytest.mark.parametrize('roles,status', [
    (['admin'], 200), (['service'], 200), (['member', 'reader'], 403), (['reader'], 403)])
def test_keystone_token_roles_are_judged_by_the_policy(keystone, roles, status):
    fixture, client = keystone
    token = 'tok-u1'
    fixture.add_token_data(token_id=token, user_id='u1', project_id='p1', role_list=roles)
    assert client.get('/resource_providers', token=token).status_int == status


def test_keystone_identity_headers_sent_by_the_client_are_ignored(keystone):
    fixture, client = keystone
    token = 'tok-u1'
    fixture.add_token_data(token_id=token, user_id='u1', project_id='p1', role_list=['reader'])
    resp = client.get('/resource_providers', token=token,
                      headers={'x-roles': 'admin', 'x-user-id': 'admin'})
    assert resp.status_int == 403


def test_keystone_system_scoped_token_is_refused(keystone):
    fixture, client = keystone
    token = ks_fixture.V3Token(user_id='u1')
    token.set_system_scope()
    token.add_role(name='admin')
    token_id = fixture.add_token(token)
    assert client.get('/resource_providers', token=token_id).status_int == 403


def test_keystone_project_reader_sees_its_own_usages(keystone):
    fixture, client = keystone
    token = 'tok-u1'
    fixture.add_token_data(token_id=token, user_id='u1', project_id='p1', role_list=['reader'])
    resp = client.get('/usages?project_id=p1', token=token)
    assert resp.status_int == 200, resp.text
    assert client.get('/usages?project_id=p2', token=token).status_int == 403


def test_keystone_root_and_healthcheck_need_no_token(keystone):
    _, client = keystone
    assert client.get('/', token=None).status_int == 200
    assert client.get('/healthcheck', token=None, mv=None).status_int == 200


def test_tokens_strategy_is_gone_with_a_clear_error():
    conf = placement_conf_mod.defaults()
    with pytest.raises(ValueError, match='removed: use keystone'):
        conf.set_override('auth_strategy', 'tokens', group='api')


def test_keystone_without_its_options_is_a_config_error_naming_them():
    from cellplane import config
    conf = placement_conf(keystone_authtoken={'www_authenticate_uri': 'http://k.invalid/v3'})
    with pytest.raises(config.ConfigError, match=r'needs \[keystone_authtoken\] auth_type'):
        placement_conf_mod.check(conf)
    placement_conf_mod.check(placement_conf(api={'auth_strategy': 'noauth2'}))


def test_a_policy_file_that_is_not_yaml_is_a_config_error_naming_it(tmp_path):
    from cellplane import config
    broken = tmp_path / 'policy.yaml'
    broken.write_text('placement:resource_providers:list: "role:admin"\nx: [\n')
    conf = placement_conf(api={'auth_strategy': 'noauth2'},
                          oslo_policy={'policy_file': str(broken)})
    with pytest.raises(config.ConfigError,
                       match=rf'\[oslo_policy\] policy_file.*{broken}.* is not valid YAML or JSON: '):
        placement_conf_mod.check(conf)
    broken.write_text('placement:resource_providers:list: "role:admin"\n')
    placement_conf_mod.check(conf)
