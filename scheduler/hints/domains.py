"""The scheduler hints naming other instances, as the Placement query and the hint filters need them.

``hinted_instances`` lists every instance the hints name (the scheduler
locates them: ``scheduler.instance_locator``); ``hinted_domains`` turns the
``same_domain``/``different_domain`` hints into the query's ``member_of``
and ``member_of=!in:``, from where those instances run. The host hints are
answered by the filters beside this module.
"""
from __future__ import annotations

from typing import Callable, Mapping

from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.scheduler_hints import (
    DIFFERENT_DOMAIN,
    DOMAIN_HINTS,
    HOST_HINTS,
    SAME_DOMAIN,
    split_domain_value,
)


def hinted_instances(spec: RequestSpec) -> list[str]:
    """Every instance the spec's hints name, sorted."""
    wanted = set()
    for hint in HOST_HINTS:
        wanted.update(spec.scheduler_hints.get(hint) or ())
    for hint in DOMAIN_HINTS:
        wanted.update(split_domain_value(v)[1] for v in spec.scheduler_hints.get(hint) or ())
    return sorted(wanted)


def hinted_domains(spec: RequestSpec, instance_hosts: Mapping[str, str],
                   domain_of_host: Callable[[str, str], str | None]
                   ) -> tuple[list[list[str]], list[str], str]:
    """(``member_of`` per same_domain hint, the domains different_domain forbids, a problem).

    A hinted instance found nowhere, or on a host in no domain of that
    level, cannot be placed beside (a problem: NoValidHost) and is not
    a reason to avoid anywhere (different_domain ignores it).
    """
    same, other = [], []
    for name in (SAME_DOMAIN, DIFFERENT_DOMAIN):
        for value in spec.scheduler_hints.get(name) or ():
            level, instance = split_domain_value(value)
            host = instance_hosts.get(instance)
            domain = None if host is None else domain_of_host(host, level)
            if name == DIFFERENT_DOMAIN:
                if domain is not None:
                    other.append(domain)
            elif domain is None:
                where = ('runs on no host Placement knows' if host is None
                         else f'runs on {host}, which is in no {level}')
                return [], [], f'{name}={value}: instance {instance} {where}'
            else:
                same.append([domain])
    return same, other, ''
