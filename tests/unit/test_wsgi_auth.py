"""OpenPathsAuthProtocol (keystonemiddleware's auth_token without webob's wsgify) answers as auth_token does.

keystonemiddleware's own test fixture decides which tokens are valid; the
same requests go to auth_token's ``AuthProtocol`` and to ours, and the app
behind them sees the same identity and the caller the same answer.
"""
from __future__ import annotations

import json

import pytest
import webob
from keystonemiddleware import auth_token
from keystonemiddleware import fixture as ksm_fixture
from oslo_config import cfg

from cellplane.wsgi import auth

KEYSTONE = 'http://keystone.invalid/v3'
IDENTITY = ('HTTP_X_IDENTITY_STATUS', 'HTTP_X_USER_ID', 'HTTP_X_PROJECT_ID', 'HTTP_X_ROLES',
            'HTTP_X_USER_NAME', 'HTTP_X_PROJECT_NAME', 'HTTP_X_USER_DOMAIN_ID',
            'HTTP_X_PROJECT_DOMAIN_ID', 'HTTP_X_SERVICE_CATALOG', 'HTTP_X_TENANT_ID')


def _app(environ, start_response):
    """Answers every header it was given (the identity ones always); 401 for /app-refuses."""
    seen = {k: environ.get(k) for k in IDENTITY}
    seen.update((k, v) for k, v in environ.items() if k.startswith('HTTP_'))
    status = '401 Unauthorized' if environ['PATH_INFO'] == '/app-refuses' else '200 OK'
    start_response(status, [('Content-Type', 'application/json')])
    return [json.dumps(seen, sort_keys=True).encode()]


def _pair(**options):
    conf = cfg.ConfigOpts()
    conf([], project='cellplane-test', default_config_files=[], default_config_dirs=[])
    settings = {'oslo_config_config': conf, 'www_authenticate_uri': KEYSTONE, **options}
    return (auth_token.AuthProtocol(_app, dict(settings)),
            auth.OpenPathsAuthProtocol(_app, dict(settings), frozenset(('/',))))


@pytest.fixture
def tokens():
    fixture = ksm_fixture.AuthTokenFixture()
    fixture.setUp()
    fixture.add_token_data(token_id='tok-member', user_id='u1', project_id='p1',
                           role_list=['member', 'reader'])
    fixture.add_token_data(token_id='tok-service', user_id='s1', project_id='service',
                           role_list=['service'])
    yield fixture
    fixture.cleanUp()


@pytest.fixture
def both(tokens):
    return _pair()


def _answer(app, path, token, headers=()):
    req = webob.Request.blank(path, headers=dict(headers))
    if token is not None:
        req.headers['X-Auth-Token'] = token
    resp = req.get_response(app)
    return resp.status, sorted((k.lower(), v) for k, v in resp.headerlist
                               if k.lower() != 'content-length'), resp.body


@pytest.mark.parametrize('path,token,headers', [
    ('/servers', 'tok-member', ()),
    # Identity headers the caller sends itself are dropped.
    ('/servers', 'tok-member', (('X-Roles', 'admin'), ('X-User-Id', 'root'))),
    ('/servers', 'tok-member', (('X-Service-Roles', 'admin'), ('X-Identity-Status', 'Confirmed'),
                                ('X-Tenant', 'other'), ('X-Is-Admin-Project', 'True'),
                                ('X-Service-Identity-Status', 'Confirmed'), ('X-Role', 'admin'),
                                ('X-Service-Catalog', '[]'), ('X-Other', 'kept'))),
    ('/servers', 'not-a-token', (('X-Roles', 'admin'), ('X-Project-Id', 'p9'))),
    ('/servers', 'not-a-token', ()),
    ('/servers', None, ()),
    ('/app-refuses', 'tok-member', ()),
])
def test_the_same_answer_and_identity_as_auth_token(both, path, token, headers):
    theirs, ours = both
    expected = _answer(theirs, path, token, headers)
    assert _answer(ours, path, token, headers) == expected
    if token == 'tok-member':
        assert json.loads(expected[2])['HTTP_X_PROJECT_ID'] == 'p1'
    else:
        assert expected[0].startswith('401')
    if expected[0].startswith('401'):
        assert ('www-authenticate', f'Keystone uri="{KEYSTONE}"') in expected[1]


def test_open_paths_need_no_token(both):
    _, ours = both
    assert _answer(ours, '/', None)[0] == '200 OK'


# A service token beside the user's (valid or not), and the decision left to the app
# (delay_auth_decision): the identity and service headers the app sees, faked ones
# among them, are auth_token's own.
FAKED = (('X-Roles', 'admin'), ('X-Service-Roles', 'admin'), ('X-Identity-Status', 'Confirmed'),
         ('X-Service-Identity-Status', 'Confirmed'), ('OpenStack-System-Scope', 'all'))


@pytest.mark.parametrize('delay', [False, True])
@pytest.mark.parametrize('token,service_token', [
    ('tok-member', 'tok-service'),
    ('tok-member', 'not-a-token'),
    ('not-a-token', 'tok-service'),
    (None, 'tok-service'),
    (None, None),
])
def test_service_tokens_and_delayed_decisions_as_auth_token(tokens, delay, token, service_token):
    theirs, ours = _pair(delay_auth_decision=delay)
    headers = FAKED + ((('X-Service-Token', service_token),) if service_token else ())
    expected = _answer(theirs, '/servers', token, headers)
    assert _answer(ours, '/servers', token, headers) == expected
    if delay and token != 'tok-member':
        seen = json.loads(expected[2])
        assert seen['HTTP_X_IDENTITY_STATUS'] == 'Invalid'   # the app decides, told so
