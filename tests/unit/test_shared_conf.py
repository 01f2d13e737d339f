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


def _every_registrar():
    from cellplane.rpc import options as rpc_options
    from cellplane_api import conf as api_role_conf
    from cellplane_api import service_conf as api_service_conf
    from compute_agent import conf as compute_conf
    from compute_agent.virt import fake
    from conductor import conf as conductor_conf
    from placement import client_conf as placement_client_conf
    from placement import conf as placement_conf
    from scheduler import conf as scheduler_conf
    return [shared_conf.register_opts, rpc_options.register_opts, api_role_conf.register_opts,
            api_service_conf.register_opts, compute_conf.register_opts, fake.register_opts,
            conductor_conf.register_opts, placement_client_conf.register_opts,
            placement_conf.register_opts, scheduler_conf.register_opts]


def test_no_registrar_shares_an_option_group_between_configurations():
    # The guard the two tests above are instances of. oslo.config's
    # register_group keeps a shallow copy of the OptGroup it is given, so a
    # module-level group registered on two configurations shares one
    # per-option dict between them, and that dict holds each option's
    # override. Every registrar must hand each configuration a fresh group.
    for register in _every_registrar():
        a, b = _two_configs(register)
        shared = sorted(name for name, group in a._groups.items()
                        if name in b._groups and group._opts is b._groups[name]._opts)
        assert not shared, f'{register.__module__}: [{"], [".join(shared)}] shared'
