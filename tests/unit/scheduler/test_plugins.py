"""Filters and weighers are found by entry point name; options are declared and listed."""
from __future__ import annotations

import pytest
from oslo_config import cfg
from stevedore import extension

from scheduler import conf as scheduler_conf
from scheduler.errors import UnknownPlugin
from scheduler.plugins import FILTER_NAMESPACE, WEIGHER_NAMESPACE, load_filters, load_from_conf


def _conf(**filter_scheduler):
    conf = cfg.ConfigOpts()
    scheduler_conf.register_opts(conf)
    conf([])
    for name, value in filter_scheduler.items():
        conf.set_override(name, value, group='filter_scheduler')
    return conf


@pytest.mark.parametrize('namespace', [FILTER_NAMESPACE, WEIGHER_NAMESPACE])
def test_every_entry_point_name_is_the_class_name(namespace):
    extensions = list(extension.ExtensionManager(namespace=namespace))
    assert extensions, f'no entry points in {namespace}: reinstall the package'
    for ext in extensions:
        assert ext.plugin.name == ext.name


def test_default_configuration_loads_every_default_filter_and_weigher():
    filters, weighers = load_from_conf(_conf())
    assert [f.name for f in filters] == scheduler_conf.DEFAULT_FILTERS
    assert [w.name for w in weighers] == scheduler_conf.DEFAULT_WEIGHERS


def test_weigher_multipliers_come_from_their_options():
    _, weighers = load_from_conf(_conf(ram_weight_multiplier=-2.5,
                                       enabled_weighers=['RAMWeigher']))
    assert weighers[0].multiplier == -2.5


def test_filters_load_in_the_configured_order():
    filters = load_filters(['SameHostFilter', 'ComputeFilter'])
    assert [f.name for f in filters] == ['SameHostFilter', 'ComputeFilter']


def test_unknown_filter_name_is_reported_with_the_available_ones():
    with pytest.raises(UnknownPlugin) as info:
        load_filters(['ComputeFilter', 'RamFilter'])
    message = str(info.value)
    assert 'RamFilter' in message and 'enabled_filters' in message
    assert 'AvailabilityZoneFilter' in message


def test_an_override_in_one_configuration_does_not_leak_into_another():
    _conf(ram_weight_multiplier=-2.5)
    assert _conf().filter_scheduler.ram_weight_multiplier == 1.0


def test_list_opts_lists_every_registered_option():
    conf = _conf()
    listed = {(str(group), opt.name) for group, opts in scheduler_conf.list_opts()
              for opt in opts}
    registered = {(group, name) for group in ('filter_scheduler', 'scheduler')
                  for name in conf[group]}
    # The one [DEFAULT] option: the AvailabilityZoneFilter's zone of a host in none.
    registered.add(('DEFAULT', 'default_availability_zone'))
    assert 'default_availability_zone' in conf
    assert listed == registered


def test_host_cache_takes_its_assume_window_from_the_configuration():
    from scheduler.host_cache import HostStateCache
    from tests.unit.scheduler.factories import allocation_request

    class Clock:
        now = 0.0

        def __call__(self):
            return self.now

    conf = _conf()
    conf.set_override('assumed_claim_seconds', 30.0, group='scheduler')
    clock = Clock()
    cache = HostStateCache.from_conf(conf, clock=clock)
    with cache.reading():
        cache.assume('i-1', allocation_request('rp-1', {'VCPU': 1}))
        clock.now = 29.0
        assert cache.assumed() == ['i-1']
        clock.now = 31.0
        assert cache.assumed() == []
