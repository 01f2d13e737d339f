"""Shared options registered on two configurations do not leak overrides."""
from oslo_config import cfg

from cellplane import conf as shared_conf


def test_override_on_one_config_does_not_show_in_another():
    a, b = cfg.ConfigOpts(), cfg.ConfigOpts()
    shared_conf.register_opts(a)
    shared_conf.register_opts(b)
    a([]), b([])
    a.set_override('connection', 'sqlite:///a', group='database')
    assert a.database.connection == 'sqlite:///a'
    assert b.database.connection is None


def _two_configs(register):
    a, b = cfg.ConfigOpts(), cfg.ConfigOpts()
    register(a)
    register(b)
    a([]), b([])
    return a, b


def test_a_conductor_override_on_one_config_does_not_show_in_another():
    # One embedded cloud's [conductor] overrides (a test's periodic Placement
    # audit every second with no grace) once ran in every later cloud of
    # the process, and removed the allocations of instances being booted.
    from conductor import conf as conductor_conf
    a, b = _two_configs(conductor_conf.register_opts)
    a.set_override('placement_audit_interval', 1, group='conductor')
    a.set_override('placement_audit_grace', 0, group='conductor')
    assert (a.conductor.placement_audit_interval, a.conductor.placement_audit_grace) == (1, 0)
    assert (b.conductor.placement_audit_interval, b.conductor.placement_audit_grace) == (0, 600)


def test_a_fake_driver_override_on_one_config_does_not_show_in_another():
    from compute_agent.virt import fake
    a, b = _two_configs(fake.register_opts)
    a.set_override('fail_fraction', 0.5, group='fake_driver')
    assert (a.fake_driver.fail_fraction, b.fake_driver.fail_fraction) == (0.5, 0.0)
