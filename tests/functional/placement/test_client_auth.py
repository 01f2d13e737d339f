"""The services' Placement client, built from ``[placement]`` as a service
reads it, against Placement served over a real socket: with noauth2's
static token, and as a Keystone user through keystoneauth1 (its own
LoadingFixture stands in for the login) to a Placement running
keystonemiddleware (its own AuthTokenFixture stands in for the
validation)."""
from __future__ import annotations

import json
import threading
import urllib.request
from wsgiref import simple_server

import pytest
from keystoneauth1.fixture import plugin as ks_plugin_fixture
from keystonemiddleware import fixture as ksm_fixture
from oslo_config import cfg

from placement import client_conf
from placement.client import PlacementClientError
from tests.functional.placement.conftest import placement_conf

CN1 = '9c7d1a4e-3b2f-4f6a-8e0d-5a1b2c3d4e5f'


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def serve(engine):
    """serve(conf) -> the URL of Placement with ``conf``, on 127.0.0.1."""
    from placement.wsgi import make_app
    servers = []

    def start(conf) -> str:
        server = simple_server.make_server('127.0.0.1', 0, make_app(engine, conf=conf),
                                           handler_class=_Quiet)
        threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                         daemon=True).start()
        servers.append(server)
        return f'http://127.0.0.1:{server.server_port}'
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _service_conf(tmp_path, placement_section: str) -> cfg.ConfigOpts:
    path = tmp_path / 'service.conf'
    path.write_text('[placement]\n' + placement_section)
    conf = cfg.ConfigOpts()
    client_conf.register_opts(conf)
    conf(['--config-file', str(path)], default_config_files=[])
    return conf


def _provider_name(url: str, token: str) -> str:
    """The name of provider CN1 as the Placement at ``url`` shows it, read past the client."""
    request = urllib.request.Request(f'{url}/resource_providers/{CN1}',
                                     headers={'X-Auth-Token': token, 'Accept': 'application/json'})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)['name']


def test_noauth2_static_token(serve, tmp_path):
    url = serve(placement_conf(api={'auth_strategy': 'noauth2'}))
    # No token option: the default, admin.
    admin = client_conf.client_from_conf(_service_conf(tmp_path, f'endpoint_url = {url}\n'), 'test')
    admin.ensure_provider(CN1, 'cn1')
    assert _provider_name(url, 'admin') == 'cn1'
    # [placement] token is what is sent: a user noauth2 gives no role is refused by the policy.
    nobody = client_conf.client_from_conf(
        _service_conf(tmp_path, f'endpoint_url = {url}\ntoken = someone:p\n'), 'test')
    with pytest.raises(PlacementClientError) as raised:
        nobody.get_provider(CN1)
    assert raised.value.status == 403


def test_noauth2_roles_are_sent_as_x_roles(serve, tmp_path):
    url = serve(placement_conf(api={'auth_strategy': 'noauth2'}))
    admin = client_conf.client_from_conf(_service_conf(tmp_path, f'endpoint_url = {url}\n'), 'test')
    rp = admin.create_provider(CN1, 'cn1')
    inventory = {rp.uuid: (rp.generation, {'VCPU': {'total': 8}})}
    # noauth2's admin alone: the reshaper is the service role's.
    with pytest.raises(PlacementClientError) as raised:
        admin.set_many_inventories(inventory)
    assert raised.value.status == 403
    service = client_conf.client_from_conf(
        _service_conf(tmp_path, f'endpoint_url = {url}\nroles = admin,service\n'), 'test')
    assert service.set_many_inventories(inventory) == {CN1: 2}


@pytest.fixture
def keystone_placement(serve):
    tokens = ksm_fixture.AuthTokenFixture()
    tokens.setUp()
    tokens.add_token_data(token_id='service-token', user_id='nova', project_id='service',
                          role_list=['service'])
    tokens.add_token_data(token_id='member-token', user_id='u', project_id='p',
                          role_list=['member', 'reader'])
    yield serve(placement_conf(
        api={'auth_strategy': 'keystone'},
        keystone_authtoken={'www_authenticate_uri': 'http://keystone.invalid/v3'}))
    tokens.cleanUp()


def _keystone_client(tmp_path, url: str, token: str, extra: str = ''):
    login = ks_plugin_fixture.LoadingFixture(token=token, endpoint=url)
    login.setUp()
    conf = _service_conf(tmp_path, 'auth_type = password\nauth_url = http://keystone.invalid/v3\n'
                                   'username = nova\npassword = secret\n' + extra)
    try:
        return client_conf.client_from_conf(conf, 'test')
    finally:
        login.cleanUp()


def test_keystone_user_with_the_service_role(keystone_placement, tmp_path):
    # No endpoint_url: Placement is where the catalog (the plugin) says.
    client = _keystone_client(tmp_path, keystone_placement, 'service-token')
    provider = client.ensure_provider(CN1, 'cn1')
    assert client.get_provider(provider.uuid).name == 'cn1'


def test_keystone_user_the_policy_refuses(keystone_placement, tmp_path):
    client = _keystone_client(tmp_path, keystone_placement, 'member-token')
    with pytest.raises(PlacementClientError) as raised:
        client.ensure_provider(CN1, 'cn1')
    assert raised.value.status == 403


def test_keystone_endpoint_url_overrides_the_catalog(keystone_placement, tmp_path):
    # One attempt: were the catalog's endpoint used, this fails at once instead of retrying.
    client = _keystone_client(tmp_path, 'http://catalog.invalid', 'service-token',
                              f'endpoint_url = {keystone_placement}\nconnect_attempts = 1\n')
    client.ensure_provider(CN1, 'cn1')
    assert _provider_name(keystone_placement, 'service-token') == 'cn1'


def test_missing_keystone_option_is_named(tmp_path):
    conf = _service_conf(tmp_path, 'auth_type = password\nusername = nova\n')
    with pytest.raises(client_conf.PlacementNotConfigured,
                       match=r'auth_type = password: \[placement\] auth_url not set'):
        client_conf.client_from_conf(conf, 'test')


def test_unknown_auth_type_is_named(tmp_path):
    conf = _service_conf(tmp_path, 'auth_type = kerberos-ish\n')
    with pytest.raises(client_conf.PlacementNotConfigured, match='no such keystoneauth1 plugin'):
        client_conf.client_from_conf(conf, 'test')


def test_neither_endpoint_nor_auth_type(tmp_path):
    conf = _service_conf(tmp_path, '')
    with pytest.raises(client_conf.PlacementNotConfigured, match='endpoint_url'):
        client_conf.client_from_conf(conf, 'test')


@pytest.mark.parametrize('option', ['cafile', 'certfile', 'keyfile'])
def test_a_tls_file_that_is_not_there_is_named_with_its_option(tmp_path, option):
    present = tmp_path / 'present.pem'
    present.write_text('')
    files = {o: str(present) for o in ('cafile', 'certfile', 'keyfile')}
    files[option] = str(tmp_path / 'gone.pem')
    conf = _service_conf(tmp_path, 'endpoint_url = https://placement.example\n'
                         + ''.join(f'{o} = {p}\n' for o, p in files.items()))
    with pytest.raises(client_conf.PlacementNotConfigured,
                       match=rf'^test: \[placement\] {option} = .*gone.pem: no such file$'):
        client_conf.client_from_conf(conf, 'test')


def test_keystone_transport_retries_then_names_an_unreachable_placement(tmp_path):
    import socket

    from placement.client import PlacementUnreachable
    with socket.socket() as s:   # a port that was free a moment ago
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    client = _keystone_client(tmp_path, f'http://127.0.0.1:{port}', 'service-token',
                              'connect_attempts = 2\nretry_timeout = 5\n')
    with pytest.raises(PlacementUnreachable,
                       match=r"unreachable after 2 attempt\(s\) .*: Connection refused"):
        client.get_provider(CN1)
