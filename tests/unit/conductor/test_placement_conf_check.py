"""Both conductors start with Placement given by URL or by a Keystone user (found in the catalog), not with neither."""
from __future__ import annotations

import pytest
from oslo_config import cfg

from cellplane import config
from conductor import conf as conductor_conf
from conductor.cell import wiring as cell_wiring
from conductor.super import wiring as super_wiring
from placement import client_conf

CHECKS = {'cell': cell_wiring.check_conf, 'super': super_wiring.check_conf}
KEYSTONE_USER = ('auth_type = password\nauth_url = http://keystone.example.com/v3\n'
                 'username = cellplane\npassword = secret\nproject_name = service\n')


def _conf(tmp_path, placement_section: str) -> cfg.ConfigOpts:
    path = tmp_path / 'conductor.conf'
    path.write_text('[api_database]\nconnection = sqlite:///api\n'
                    '[placement]\n' + placement_section)
    return config.load(['--config-file', str(path)], prog='test', conf=cfg.ConfigOpts(),
                       setup_logging=False, registrars=[conductor_conf.register_opts,
                                                        client_conf.register_opts])


@pytest.mark.parametrize('role', sorted(CHECKS))
def test_a_keystone_user_without_endpoint_url_is_accepted(tmp_path, role):
    CHECKS[role](_conf(tmp_path, KEYSTONE_USER), 'cellplane-conductor')


@pytest.mark.parametrize('role', sorted(CHECKS))
def test_an_endpoint_url_without_keystone_is_accepted(tmp_path, role):
    CHECKS[role](_conf(tmp_path, 'endpoint_url = http://127.0.0.1:8778\n'),
                 'cellplane-conductor')


@pytest.mark.parametrize('role', sorted(CHECKS))
def test_neither_is_refused_naming_both_ways(tmp_path, role):
    with pytest.raises(client_conf.PlacementNotConfigured) as refused:
        CHECKS[role](_conf(tmp_path, ''), 'cellplane-conductor')
    assert f'(role {role}) needs [placement] endpoint_url (or auth_type' in str(refused.value)
