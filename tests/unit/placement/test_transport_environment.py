"""The Placement client reads the proxy and CA-bundle environment once, as requests would on every call."""
from __future__ import annotations

import pytest
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


def _files(tmp_path, *names) -> list[str]:
    paths = [tmp_path / name for name in names]
    for path in paths:
        path.write_text('')
    return [str(p) for p in paths]


def test_a_ca_bundle_from_the_environment_is_what_verifies_unless_one_is_given(
        monkeypatch, tmp_path):
    ours, given = _files(tmp_path, 'our-ca.pem', 'ca.pem')
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', ours)
    assert HttpTransport('https://placement.example').verify == ours
    assert HttpTransport('https://placement.example', verify=given).verify == given
    assert HttpTransport('https://placement.example', verify=False).verify is False
    monkeypatch.delenv('REQUESTS_CA_BUNDLE')
    monkeypatch.delenv('CURL_CA_BUNDLE', raising=False)
    assert HttpTransport('https://placement.example').verify is True


def _tls(transport) -> dict:
    """The TLS settings of the transport's pool (it has one host: no manager)."""
    pool = transport.pool
    assert isinstance(pool, urllib3.HTTPConnectionPool)
    names = ('cert_reqs', 'ca_certs', 'ca_cert_dir', 'cert_file', 'key_file')
    return {name: getattr(pool, name) for name in names
            if getattr(pool, name, None) is not None}


def test_the_ca_a_connection_verifies_with_and_the_client_certificate(monkeypatch, tmp_path):
    monkeypatch.delenv('REQUESTS_CA_BUNDLE', raising=False)
    monkeypatch.delenv('CURL_CA_BUNDLE', raising=False)
    ca, cert, key = _files(tmp_path, 'ca.pem', 'me.pem', 'me.key')
    default = _tls(HttpTransport('https://placement.example'))
    assert (default['cert_reqs'], default['ca_certs']) == ('CERT_REQUIRED', requests.certs.where())
    given = _tls(HttpTransport('https://placement.example', verify=ca, cert=(cert, key)))
    assert (given['ca_certs'], given['cert_file'], given['key_file']) == (ca, cert, key)
    assert _tls(HttpTransport('https://placement.example', cert=cert))['cert_file'] == cert
    assert _tls(HttpTransport('https://placement.example', verify=str(tmp_path)))[
        'ca_cert_dir'] == str(tmp_path)
    assert _tls(HttpTransport('https://placement.example', verify=False))['cert_reqs'] == \
        'CERT_NONE'
    assert 'cert_reqs' not in _tls(HttpTransport('http://placement.example'))


@pytest.mark.parametrize('which', ['verify', 'cert', 'key'])
def test_a_tls_file_that_is_not_there_is_refused_at_once(tmp_path, which):
    ca, cert, key = _files(tmp_path, 'ca.pem', 'me.pem', 'me.key')
    missing = str(tmp_path / 'gone.pem')
    kwargs = {'verify': ca, 'cert': (cert, key)}
    if which == 'verify':
        kwargs['verify'] = missing
    else:
        kwargs['cert'] = (missing, key) if which == 'cert' else (cert, missing)
    with pytest.raises(FileNotFoundError, match=f'not found: {missing}$'):
        HttpTransport('https://placement.example', **kwargs)
    # Plain http reads no TLS file: nothing to refuse.
    HttpTransport('http://placement.example', **kwargs)


def test_the_proxys_credentials_are_sent_to_it(monkeypatch):
    monkeypatch.setenv('HTTPS_PROXY', 'http://cp%40svc:s3cret@proxy.example:3128')
    monkeypatch.delenv('https_proxy', raising=False)
    monkeypatch.delenv('NO_PROXY', raising=False)
    monkeypatch.delenv('no_proxy', raising=False)
    pool = HttpTransport('https://placement.example').pool
    assert isinstance(pool, urllib3.ProxyManager)
    assert pool.proxy_headers == urllib3.make_headers(proxy_basic_auth='cp@svc:s3cret')
    monkeypatch.setenv('HTTPS_PROXY', 'http://proxy.example:3128')
    assert 'proxy-authorization' not in {
        k.lower() for k in HttpTransport('https://placement.example').pool.proxy_headers}
