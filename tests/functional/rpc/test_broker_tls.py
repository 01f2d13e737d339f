"""A daemon's look at its broker's certificate before serving (``cellplane.rpc.broker_tls``), on real sockets."""
from __future__ import annotations

import pytest
from oslo_config import cfg

from cellplane.rpc import broker_tls
from cellplane.rpc import options as rpc_options
from tests.support.deployment import free_port
from tests.support.rogue_tls import RogueTLSServer
from tests.support.throwaway_ca import ThrowawayCA


@pytest.fixture
def pki(tmp_path):
    ours = ThrowawayCA.create(tmp_path / 'ours', 'our CA')
    rogue = ThrowawayCA.create(tmp_path / 'rogue', 'rogue CA')
    return ours.issue('server'), rogue.issue('server')


def _conf(**rabbit) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    rpc_options.register_opts(conf)
    conf([], project='cellplane-tests', default_config_files=[], default_config_dirs=[])
    for name, value in rabbit.items():
        conf.set_override(name, value, group=rpc_options.RABBIT_GROUP)
    return conf


def test_a_broker_certificate_of_our_ca_passes(pki):
    ours, _ = pki
    with RogueTLSServer(ours) as broker:
        broker_tls.check_certificates(_conf(ssl=True, ssl_ca_file=str(ours.ca)),
                                      f'rabbit://u:p@127.0.0.1:{broker.port}/v')
        assert broker.handshakes == 1


def test_a_broker_certificate_of_another_ca_is_refused_naming_the_option(pki):
    ours, rogue_cert = pki
    with RogueTLSServer(rogue_cert) as broker:
        with pytest.raises(broker_tls.BrokerCertificateRefused) as err:
            broker_tls.check_certificates(_conf(ssl=True, ssl_ca_file=str(ours.ca)),
                                          f'rabbit://u:p@127.0.0.1:{broker.port}/v')
    assert str(err.value) == (
        f'the broker at 127.0.0.1:{broker.port} presented a certificate that '
        f'[oslo_messaging_rabbit] ssl_ca_file ({ours.ca}) does not verify: '
        f'unable to get local issuer certificate')


def test_the_url_query_turns_tls_on_as_for_oslo_messaging(pki):
    ours, rogue_cert = pki
    with RogueTLSServer(rogue_cert) as broker:
        with pytest.raises(broker_tls.BrokerCertificateRefused):
            broker_tls.check_certificates(
                _conf(ssl_ca_file=str(ours.ca)),
                f'rabbit://u:p@127.0.0.1:{broker.port}/v?ssl=1')


def test_without_tls_or_a_ca_file_nothing_is_checked(pki):
    ours, rogue_cert = pki
    with RogueTLSServer(rogue_cert) as broker:
        url = f'rabbit://u:p@127.0.0.1:{broker.port}/v'
        broker_tls.check_certificates(_conf(ssl_ca_file=str(ours.ca)), url)
        broker_tls.check_certificates(_conf(ssl=True), url)
        assert broker.handshakes == 0


def test_a_broker_that_does_not_answer_is_left_to_the_reconnects(pki):
    ours, _ = pki
    broker_tls.check_certificates(_conf(ssl=True, ssl_ca_file=str(ours.ca)),
                                  f'rabbit://u:p@127.0.0.1:{free_port()}/v')
