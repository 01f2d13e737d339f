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
