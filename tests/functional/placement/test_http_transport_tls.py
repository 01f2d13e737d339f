"""HttpTransport against an HTTPS server whose certificate another CA signed: refused at once, saying why.

The CA the client is given (``[placement] cafile``) is the one that counts,
even when the environment names another (``REQUESTS_CA_BUNDLE`` would
replace a ``requests`` session's own choice).
"""
from __future__ import annotations

import pytest

from placement.client import HttpTransport, PlacementUnreachable
from tests.support.rogue_tls import RogueTLSServer
from tests.support.throwaway_ca import ThrowawayCA


@pytest.fixture
def pki(tmp_path):
    ours = ThrowawayCA.create(tmp_path / 'ours', 'our CA')
    rogue = ThrowawayCA.create(tmp_path / 'rogue', 'rogue CA')
    return ours.cert_file, rogue.issue('server')


def test_a_certificate_our_ca_did_not_sign_is_refused_without_retrying(pki, monkeypatch):
    ours, rogue_cert = pki
    # The environment trusts the rogue CA; the configuration does not.
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', str(rogue_cert.ca))
    with RogueTLSServer(rogue_cert) as rogue:
        transport = HttpTransport(f'https://127.0.0.1:{rogue.port}', verify=str(ours),
                                  attempts=None, retry_timeout=30, max_wait=0.05)
        with pytest.raises(PlacementUnreachable) as err:
            transport.request('GET', '/')
    assert str(err.value) == (
        f'placement at https://127.0.0.1:{rogue.port} unreachable: TLS certificate verify '
        f'failed: unable to get local issuer certificate (is its certificate signed by the '
        f'CA of [placement] cafile?)')
    assert rogue.handshakes == 1
