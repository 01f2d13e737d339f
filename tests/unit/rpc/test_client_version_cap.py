"""RPCAPIClient: [upgrade_levels] caps what a client sends during a rolling upgrade."""
from __future__ import annotations

import copy

import pytest
from oslo_config import cfg

from cellplane import conf as shared_conf
from cellplane.rpc.client import InvalidVersionCap, MethodNotAllowedByCap, RPCAPIClient
from cellplane.rpc.transport import get_transport


class WidgetAPI(RPCAPIClient):
    SERVICE = 'scheduler'
    TOPIC = 'widgets'
    API_VERSION = '1.3'


@pytest.fixture(scope='module')
def transport():
    transport = get_transport('fake://')
    yield transport
    transport.cleanup()


def _client(transport, cap: str | None) -> WidgetAPI:
    conf = cfg.ConfigOpts()
    # Fresh option objects under a group named by string: overriding the
    # module-level OptGroup of cellplane.conf would leak into cfg.CONF.
    conf.register_opts(copy.deepcopy(shared_conf.upgrade_levels_opts),
                       group='upgrade_levels')
    conf([], default_config_files=[], default_config_dirs=[])
    if cap is not None:
        conf.set_override('scheduler', cap, group='upgrade_levels')
    return WidgetAPI(transport, conf=conf)


def test_without_a_cap_the_client_sends_its_own_version(transport):
    client = _client(transport, None)
    assert client.version_cap == '1.3'
    assert client.pick_version('grow', '1.3') == '1.3'


def test_a_method_newer_than_the_cap_is_refused_naming_method_option_and_versions(transport):
    client = _client(transport, '1.1')
    with pytest.raises(MethodNotAllowedByCap) as err:
        client.prepare('grow', '1.2')
    message = str(err.value)
    assert "'grow'" in message
    assert '[upgrade_levels] scheduler' in message
    assert '1.2' in message and '1.1' in message


def test_a_method_with_an_older_form_is_downgraded_to_what_the_cap_allows(transport):
    client = _client(transport, '1.1')
    assert client.pick_version('grow', '1.3', '1.0') == '1.0'
    assert client.pick_version('grow', '1.1', '1.3') == '1.1'


def test_a_cap_above_the_client_version_sends_the_client_version(transport):
    assert _client(transport, '1.9').version_cap == '1.3'


@pytest.mark.parametrize('cap, reason', [('2.0', 'another major'), ('latest', 'major.minor')])
def test_an_unusable_cap_is_refused_naming_the_option(transport, cap, reason):
    with pytest.raises(InvalidVersionCap, match=rf'\[upgrade_levels\] scheduler.*{reason}'):
        _client(transport, cap)


def test_a_prepared_call_context_is_kept_per_method_versions_and_destination(
        transport, monkeypatch):
    client = _client(transport, '1.1')
    first = client.prepare('grow', '1.3', '1.0')
    assert first.target.version == '1.0'
    assert client.prepare('grow', '1.3', '1.0') is first
    to_host = client.prepare('grow', '1.3', '1.0', server='host-1')
    assert to_host is not first and to_host.target.server == 'host-1'
    assert client.prepare('grow', '1.1').target.version == '1.1'
    monkeypatch.setattr('cellplane.rpc.client.PREPARED_KEPT', 3)
    client.prepare('shrink', '1.0')     # a fourth: every kept one is forgotten first
    assert client.prepare('grow', '1.3', '1.0') is not first
