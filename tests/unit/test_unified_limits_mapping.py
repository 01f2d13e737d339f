"""Unified limits' mapping: a flavor's deltas, the usage callback's counts, which resources are
enforced, and Keystone's limits under cellplane's (Nova's legacy) quota names.

The pure functions of ``cellplane_api/unified_limits.py``; the driver over a
real Keystone is tests/integration/test_unified_limits_keystone.py.
"""
from __future__ import annotations

import pytest

from cellplane_api import unified_limits as ul
from cellplane_api.quotas import NETWORK, RESOURCES


def test_deltas_are_servers_and_a_class_per_resource_class_times_the_count():
    assert ul.deltas_for({'VCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 1}, 3) == {
        'servers': 3, 'class:DISK_GB': 3, 'class:MEMORY_MB': 1536, 'class:VCPU': 6}


def test_a_class_the_flavor_asks_none_of_is_not_a_delta():
    assert ul.deltas_for({'VCPU': 1, 'DISK_GB': 0, 'CUSTOM_FPGA': 1}, 2) == {
        'servers': 2, 'class:VCPU': 2, 'class:CUSTOM_FPGA': 2}


def test_zero_instances_keep_the_names_for_the_recheck():
    assert ul.deltas_for({'VCPU': 1, 'MEMORY_MB': 64}, 0) == {
        'servers': 0, 'class:VCPU': 0, 'class:MEMORY_MB': 0}
    with pytest.raises(ValueError, match='negative'):
        ul.deltas_for({'VCPU': 1}, -1)


def test_usage_maps_classes_to_placement_and_servers_to_the_instance_count():
    asked = []

    def placed():
        asked.append(1)
        return {'VCPU': 5, 'MEMORY_MB': 2048}

    used = ul.usage_for(['class:VCPU', 'servers', 'class:MEMORY_MB', 'class:DISK_GB'],
                        servers=lambda: 3, placed=placed)
    # A class Placement does not list (nothing of it used) is 0.
    assert used == {'class:VCPU': 5, 'servers': 3, 'class:MEMORY_MB': 2048, 'class:DISK_GB': 0}
    assert len(asked) == 1, 'Placement is asked once per count'


def test_placement_is_not_asked_when_no_class_is_counted():
    def placed():
        raise AssertionError('Placement asked')

    assert ul.usage_for(['servers'], servers=lambda: 4, placed=placed) == {'servers': 4}


def test_groups_and_members_are_counted_only_where_a_counter_is_given():
    assert ul.usage_for(['server_groups'], servers=lambda: 0, placed=dict,
                        groups=lambda: 2) == {'server_groups': 2}
    assert ul.usage_for(['server_group_members'], servers=lambda: 0, placed=dict,
                        members=lambda: 7) == {'server_group_members': 7}
    with pytest.raises(ValueError, match='server_group_members'):
        ul.usage_for(['server_group_members'], servers=lambda: 0, placed=dict)
    with pytest.raises(ValueError, match="'server_key_pairs'"):
        ul.usage_for(['server_key_pairs'], servers=lambda: 0, placed=dict)


@pytest.mark.parametrize('strategy, listed, expected', [
    # Nova's default: servers must have a limit; classes without one are unlimited.
    ('require', ['servers'], ['servers', 'class:VCPU']),
    ('require', ['servers', 'class:DISK_GB'], ['servers', 'class:VCPU', 'class:DISK_GB']),
    # ignore: the listed ones without a limit are unlimited, every other is enforced.
    ('ignore', ['class:DISK_GB'], ['servers', 'class:VCPU', 'class:MEMORY_MB']),
    ('ignore', [], ['servers', 'class:VCPU', 'class:MEMORY_MB', 'class:DISK_GB']),
])
def test_a_resource_with_no_limit_in_keystone_follows_the_strategy(strategy, listed, expected):
    names = ['servers', 'class:VCPU', 'class:MEMORY_MB', 'class:DISK_GB']
    have_limit = {'servers', 'class:VCPU'}
    assert ul.enforced(names, have_limit, strategy=strategy, listed=listed) == expected


def test_an_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match='strategy'):
        ul.enforced(['servers'], set(), strategy='maybe', listed=[])


def test_keystone_limits_are_shown_under_the_legacy_names():
    limits = {'servers': 2, 'class:VCPU': 8, 'class:MEMORY_MB': 4096, 'server_groups': -1,
              'server_group_members': 5, 'server_metadata_items': 64}
    shown = ul.legacy_limits(limits, enforced_names={'servers', 'server_key_pairs'})
    assert set(shown) == set(RESOURCES)
    assert (shown['instances'], shown['cores'], shown['ram'], shown['server_groups'],
            shown['server_group_members'], shown['metadata_items']) == (2, 8, 4096, -1, 5, 64)
    # No limit in Keystone: none allowed if enforced, else unlimited.
    assert shown['key_pairs'] == 0
    assert shown['injected_files'] == -1
    assert all(shown[r] == -1 for r in NETWORK)


def test_every_legacy_name_but_the_network_ones_has_a_unified_name():
    assert set(ul.LIMIT_NAMES) == set(RESOURCES) - set(NETWORK)
    assert ul.LIMIT_NAMES['instances'] == 'servers'
    assert ul.LIMIT_NAMES['cores'] == 'class:VCPU'
    assert ul.LIMIT_NAMES['ram'] == 'class:MEMORY_MB'


def test_the_driver_needs_the_global_options_and_an_oslo_limit_login():
    from oslo_config import cfg
    from oslo_limit import limit  # noqa: F401  (registers [oslo_limit] in the global options)

    from cellplane.config import ConfigError

    with pytest.raises(ConfigError, match='global configuration'):
        ul.check_conf(cfg.ConfigOpts())
    if cfg.CONF.oslo_limit.auth_type:
        pytest.skip('this process set [oslo_limit] auth_type')
    with pytest.raises(ConfigError, match=r'\[oslo_limit\] auth_type'):
        ul.check_conf(cfg.CONF)
