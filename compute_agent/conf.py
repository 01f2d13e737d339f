"""Options of the compute agent.

Foundation scope: the agent uses only shared options (``[DEFAULT] host``,
``transport_url``, ``[service] report_interval``, ``[cell] name``). Its own
group is declared here so later issues (virt driver, resource reporting)
add their options in one place; an agent never has a database option.
"""
from __future__ import annotations

from oslo_config import cfg

compute_group = cfg.OptGroup('compute', title='Compute agent')

compute_opts: list[cfg.Opt] = []


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(compute_group)
    conf.register_opts(compute_opts, group=compute_group)


def list_opts():
    return [(compute_group, compute_opts)]
