"""Load the filters and weighers the configuration names, through stevedore entry points.

A name that is not installed is a configuration error reported at start-up
with the names that are available.
"""
from __future__ import annotations

from typing import Sequence

from oslo_config import cfg
from stevedore import extension

from scheduler.errors import UnknownPlugin
from scheduler.filters.base import HostFilter
from scheduler.weighers.base import HostWeigher

FILTER_NAMESPACE = 'cellplane.scheduler.filters'
WEIGHER_NAMESPACE = 'cellplane.scheduler.weighers'


def _classes(namespace: str, names: Sequence[str], option: str) -> list[type]:
    manager = extension.ExtensionManager(namespace=namespace, invoke_on_load=False)
    available = {ext.name: ext.plugin for ext in manager}
    missing = [n for n in names if n not in available]
    if missing:
        raise UnknownPlugin(
            f'[filter_scheduler] {option} names {", ".join(missing)}, which '
            f'{"is" if len(missing) == 1 else "are"} not installed in entry point '
            f'namespace {namespace}. Available: {", ".join(sorted(available)) or "none"}')
    return [available[n] for n in names]


def load_filters(names: Sequence[str]) -> list[HostFilter]:
    """Instances of the named filters, in the given order."""
    return [cls() for cls in _classes(FILTER_NAMESPACE, names, 'enabled_filters')]


def load_weighers(names: Sequence[str], conf: cfg.ConfigOpts) -> list[HostWeigher]:
    """Instances of the named weighers, each with its multiplier from ``conf``."""
    group = conf.filter_scheduler
    return [cls(multiplier=group[cls.multiplier_option])
            for cls in _classes(WEIGHER_NAMESPACE, names, 'enabled_weighers')]


def load_from_conf(conf: cfg.ConfigOpts) -> tuple[list[HostFilter], list[HostWeigher]]:
    group = conf.filter_scheduler
    filters = load_filters(group.enabled_filters)
    for host_filter in filters:
        host_filter.configure(conf)
    return filters, load_weighers(group.enabled_weighers, conf)
