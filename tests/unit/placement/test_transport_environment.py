"""The Placement client reads the proxy and CA-bundle environment once, as requests would on every call."""
from __future__ import annotations

import requests
import urllib3

from placement.client.transport import HttpTransport


def test_proxies_from_the_environment_are_used_unless_no_proxy_names_the_host(monkeypatch):
    monkeypatch.setenv('HTTP_PROXY', 'http://proxy.example:3128')
    monkeypatch.setenv('NO_PROXY', 'placement.internal')
    monkeypatch.delenv('http_proxy', raising=False)
    monkeypatch.delenv('no_proxy', raising=False)
    through = HttpTransport('http://placement.example:8778')
    direct = HttpTransport('http://placement.internal:8778')
    assert through.proxies.get('http') == 'http://proxy.example:3128'
    assert direct.proxies == {}
    # What sends: through the proxy, and straight to the host NO_PROXY names.
    assert isinstance(through.pool, urllib3.ProxyManager)
    assert through.pool.proxy.url == 'http://proxy.example:3128'
    assert not isinstance(direct.pool, urllib3.ProxyManager)


def test_a_ca_bundle_from_the_environment_is_what_verifies_unless_one_is_given(monkeypatch):
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', '/etc/ssl/our-ca.pem')
    assert HttpTransport('https://placement.example').verify == '/etc/ssl/our-ca.pem'
    assert HttpTransport('https://placement.example', verify='/etc/cp/ca.pem').verify == \
        '/etc/cp/ca.pem'
    assert HttpTransport('https://placement.example', verify=False).verify is False
    monkeypatch.delenv('REQUESTS_CA_BUNDLE')
    monkeypatch.delenv('CURL_CA_BUNDLE', raising=False)
    assert HttpTransport('https://placement.example').verify is True


def _tls(transport) -> dict:
    return transport.pool.connection_pool_kw


def test_the_ca_a_connection_verifies_with_and_the_client_certificate(monkeypatch, tmp_path):
    monkeypatch.delenv('REQUESTS_CA_BUNDLE', raising=False)
    monkeypatch.delenv('CURL_CA_BUNDLE', raising=False)
    default = _tls(HttpTransport('https://placement.example'))
    assert (default['cert_reqs'], default['ca_certs']) == ('CERT_REQUIRED', requests.certs.where())
    given = _tls(HttpTransport('https://placement.example', verify='/etc/cp/ca.pem',
                               cert=('/etc/cp/me.pem', '/etc/cp/me.key')))
    assert (given['ca_certs'], given['cert_file'], given['key_file']) == (
        '/etc/cp/ca.pem', '/etc/cp/me.pem', '/etc/cp/me.key')
    assert _tls(HttpTransport('https://placement.example', verify=str(tmp_path)))[
        'ca_cert_dir'] == str(tmp_path)
    assert _tls(HttpTransport('https://placement.example', verify=False))['cert_reqs'] == \
        'CERT_NONE'
    assert 'cert_reqs' not in _tls(HttpTransport('http://placement.example'))
