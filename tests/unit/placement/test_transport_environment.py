"""The Placement client reads the proxy and CA-bundle environment once, as requests would on every call."""
from __future__ import annotations

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
    assert not through.session.trust_env


def test_a_ca_bundle_from_the_environment_is_what_verifies_unless_one_is_given(monkeypatch):
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', '/etc/ssl/our-ca.pem')
    assert HttpTransport('https://placement.example').verify == '/etc/ssl/our-ca.pem'
    assert HttpTransport('https://placement.example', verify='/etc/cp/ca.pem').verify == \
        '/etc/cp/ca.pem'
    assert HttpTransport('https://placement.example', verify=False).verify is False
    monkeypatch.delenv('REQUESTS_CA_BUNDLE')
    monkeypatch.delenv('CURL_CA_BUNDLE', raising=False)
    assert HttpTransport('https://placement.example').verify is True
