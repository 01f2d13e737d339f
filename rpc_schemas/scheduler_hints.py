"""The scheduler hints a RequestSpec carries: their names and how a value is written.

    same_host: [INSTANCE]                on the host INSTANCE runs on
    different_host: [INSTANCE]           not on it
    same_domain: ["LEVEL:INSTANCE"]      in INSTANCE's domain at LEVEL (a rack, a row ...)
    different_domain: ["LEVEL:INSTANCE"] outside it

INSTANCE is an instance uuid; LEVEL a failure-domain level (at the host
level the API sends the host hint instead). The API role writes them
(``cellplane_api.scheduler_hints``), the scheduler reads them
(``scheduler.hints``); both go through these names and ``domain_value`` /
``split_domain_value``.
"""
from __future__ import annotations

SAME_HOST = 'same_host'
DIFFERENT_HOST = 'different_host'
SAME_DOMAIN = 'same_domain'
DIFFERENT_DOMAIN = 'different_domain'
HOST_HINTS = (SAME_HOST, DIFFERENT_HOST)
DOMAIN_HINTS = (SAME_DOMAIN, DIFFERENT_DOMAIN)
HINTS = HOST_HINTS + DOMAIN_HINTS


def domain_value(level: str, instance: str) -> str:
    """A domain hint's value: ``LEVEL:INSTANCE``."""
    return f'{level}:{instance}'


def split_domain_value(value: str) -> tuple[str, str]:
    """``LEVEL:INSTANCE`` -> (level, instance); either is '' when the value lacks it."""
    level, _, instance = value.partition(':')
    return level, instance
