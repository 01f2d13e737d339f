"""``[api] ssl_cert_file`` and ``ssl_key_file``: checked before the workers fork, handed to granian."""
from __future__ import annotations

from pathlib import Path

import pytest

from cellplane import config
from cellplane.wsgi import tls
from placement import conf as placement_conf
from tests.support.throwaway_ca import ThrowawayCA


@pytest.fixture
def certs(tmp_path):
    ca = ThrowawayCA.create(tmp_path / 'ca', 'unit CA')
    return ca.issue('server'), ca.issue('other')


def _conf(**api):
    conf = placement_conf.defaults()
    for name, value in api.items():
        conf.set_override(name, str(value), group='api')
    return conf


def test_without_a_certificate_the_daemon_serves_plain_http():
    conf = _conf()
    tls.check(conf)
    assert tls.server_options(conf.api) == {}
    assert tls.scheme(conf.api) == 'http'


def test_a_certificate_and_its_key_are_served(certs):
    server, _ = certs
    conf = _conf(ssl_cert_file=server.cert, ssl_key_file=server.key)
    tls.check(conf)
    assert tls.server_options(conf.api) == {'ssl_cert': Path(server.cert),
                                            'ssl_key': Path(server.key)}
    assert tls.scheme(conf.api) == 'https'


def test_a_certificate_without_its_key_is_refused(certs):
    server, _ = certs
    with pytest.raises(config.ConfigError, match=r'\[api\] ssl_key_file is not'):
        tls.check(_conf(ssl_cert_file=server.cert))


def test_an_unreadable_file_is_refused_naming_the_option(certs, tmp_path):
    server, _ = certs
    with pytest.raises(config.ConfigError, match=r'\[api\] ssl_key_file.*cannot read'):
        tls.check(_conf(ssl_cert_file=server.cert, ssl_key_file=tmp_path / 'missing.key'))


def test_a_key_of_another_certificate_is_refused(certs):
    server, other = certs
    with pytest.raises(config.ConfigError, match='not a PEM certificate and its unencrypted key'):
        tls.check(_conf(ssl_cert_file=server.cert, ssl_key_file=other.key))
