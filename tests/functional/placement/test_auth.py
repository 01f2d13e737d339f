"""Authentication (401) and role policy (403), in both auth strategies."""
from __future__ import annotations

import pytest

from placement import auth
from tests.functional.placement.conftest import error

TOKENS = {'adm-secret': 'admin', 'svc-secret': 'service', 'ro-secret': 'reader'}


@pytest.fixture
def tokens_client(make_client):
    return make_client(auth_strategy='tokens', tokens=TOKENS)


# ------------------------------------------------------------- noauth2

def test_noauth2_without_token_is_401(client):
    resp = client.get('/resource_providers', token=None)
    assert resp.status_int == 401
    assert error(resp)['title'] == 'Unauthorized'


@pytest.mark.parametrize('token', ['admin', 'admin:admin', 'admin:some-project', 'service'])
def test_noauth2_admin_and_service_may_do_everything(client, token):
    assert client.get('/resource_providers', token=token).status_int == 200
    assert client.post('/resource_providers', {'name': token}, token=token).status_int == 200


def test_noauth2_other_users_are_forbidden(client):
    resp = client.get('/resource_providers', token='user')
    assert resp.status_int == 403
    assert error(resp)['title'] == 'Forbidden'


def test_noauth2_reader_reads_only(client):
    assert client.get('/resource_providers', token='reader').status_int == 200
    assert client.post('/resource_providers', {'name': 'x'}, token='reader').status_int == 403


# ------------------------------------------------------------- tokens

@pytest.mark.parametrize('token', [None, '', 'admin', 'wrong'])
def test_tokens_without_a_valid_token_is_401(tokens_client, token):
    resp = tokens_client.get('/resource_providers', token=token)
    assert resp.status_int == 401, resp.text


@pytest.mark.parametrize('token', ['adm-secret', 'svc-secret'])
def test_tokens_admin_and_service_may_write(tokens_client, token):
    resp = tokens_client.post('/resource_providers', {'name': token}, token=token)
    assert resp.status_int == 200


def test_tokens_reader_may_read_but_not_write(tokens_client):
    rp = tokens_client.post('/resource_providers', {'name': 'cn1'},
                            token='adm-secret').json
    assert tokens_client.get(f'/resource_providers/{rp["uuid"]}',
                             token='ro-secret').status_int == 200
    for method, path, body in [
            ('POST', '/resource_providers', {'name': 'cn2'}),
            ('PUT', f'/resource_providers/{rp["uuid"]}', {'name': 'renamed'}),
            ('DELETE', f'/resource_providers/{rp["uuid"]}', None),
            ('PUT', '/traits/CUSTOM_X', None),
            ('POST', '/resource_classes', {'name': 'CUSTOM_X'})]:
        resp = tokens_client.request(method, path, body, token='ro-secret')
        assert resp.status_int == 403, (method, path, resp.text)
        assert error(resp)['title'] == 'Forbidden'
    assert tokens_client.get(f'/resource_providers/{rp["uuid"]}',
                             token='ro-secret').json['name'] == 'cn1'


def test_401_comes_before_404_and_405(tokens_client):
    assert tokens_client.get('/nowhere', token=None).status_int == 401
    assert tokens_client.request('PATCH', '/resource_providers', token=None).status_int == 401


def test_403_comes_after_404_and_405(tokens_client):
    assert tokens_client.get('/nowhere', token='ro-secret').status_int == 404
    assert tokens_client.request('PATCH', '/resource_providers',
                                 token='ro-secret').status_int == 405


def test_token_file_is_parsed(tmp_path):
    path = tmp_path / 'tokens'
    path.write_text('# comment\n\nadm-secret admin\nro-secret   reader\n')
    assert auth.read_token_file(str(path)) == {'adm-secret': 'admin', 'ro-secret': 'reader'}


@pytest.mark.parametrize('content', ['just-a-token\n', 'tok superuser\n', 'a b c\n'])
def test_bad_token_file_names_the_line(tmp_path, content):
    path = tmp_path / 'tokens'
    path.write_text('good admin\n' + content)
    with pytest.raises(auth.TokenFileError, match=f'{path}:2'):
        auth.read_token_file(str(path))


def test_missing_token_file_is_reported(tmp_path):
    with pytest.raises(auth.TokenFileError, match='cannot read token file'):
        auth.make_authenticator('tokens', token_file=str(tmp_path / 'absent'))
    with pytest.raises(auth.TokenFileError, match='token_file'):
        auth.make_authenticator('tokens')


def test_tokens_app_from_file(make_client, tmp_path):
    path = tmp_path / 'tokens'
    path.write_text('file-token service\n')
    c = make_client(auth_strategy='tokens', token_file=str(path))
    assert c.get('/resource_providers', token='file-token').status_int == 200
    assert c.get('/resource_providers', token='admin').status_int == 401
