"""Scheduler hints about other instances: ``--hint NAME=VALUE`` checked and resolved to uuids.

    same_host=INSTANCE            on the host INSTANCE runs on
    different_host=INSTANCE       not on it
    same_domain=LEVEL:INSTANCE    in the domain at LEVEL INSTANCE is in (a rack, a row ...)
    different_domain=LEVEL:INSTANCE  outside it

INSTANCE is a server id or name. LEVEL is ``host`` or a level the
scheduler recorded. The request spec carries them as
``{"different_domain": ["row:<uuid>"], "same_host": ["<uuid>"]}``.
"""
from __future__ import annotations

from typing import Iterable

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.objects import failure_domains
from cellplane_api import servers
from cellplane_api.conf import DEFAULT_CELL_TIMEOUT

SAME_HOST = 'same_host'
DIFFERENT_HOST = 'different_host'
SAME_DOMAIN = 'same_domain'
DIFFERENT_DOMAIN = 'different_domain'
HOST_HINTS = (SAME_HOST, DIFFERENT_HOST)
DOMAIN_HINTS = (SAME_DOMAIN, DIFFERENT_DOMAIN)
HINTS = HOST_HINTS + DOMAIN_HINTS


class HintError(ValueError):
    """A hint that is malformed (a usage error) or names what does not exist."""


def split(text: str) -> tuple[str, str | None, str]:
    """``NAME=[LEVEL:]INSTANCE`` -> (name, level or None, instance); ``HintError`` if malformed."""
    name, sep, value = text.partition('=')
    if not sep or not value:
        raise HintError(f'expected NAME=VALUE, got {text!r}')
    if name not in HINTS:
        raise HintError(f'unknown hint {name!r} (one of {", ".join(HINTS)})')
    if name in HOST_HINTS:
        return name, None, value
    level, sep, instance = value.partition(':')
    if not sep or not level or not instance:
        raise HintError(f'{name} expects LEVEL:INSTANCE, got {value!r}')
    return name, level, instance


def resolve(api_engine: Engine, cells: CellDatabases, texts: Iterable[str], *,
            cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> dict[str, list[str]]:
    """The hints as the request spec carries them; ``servers.ServerError`` names what is wrong."""
    hints: dict[str, list[str]] = {}
    levels = None
    for text in texts:
        try:
            name, level, instance = split(text)
        except HintError as exc:
            raise servers.ServerError(str(exc)) from None
        uuid = servers.find(api_engine, cells, instance, cell_timeout=cell_timeout)
        if level == 'host':
            # At the host level a domain hint is the host hint.
            name, level = (SAME_HOST if name == SAME_DOMAIN else DIFFERENT_HOST), None
        if level is not None:
            levels = failure_domains.levels(api_engine) if levels is None else levels
            if level not in levels:
                raise servers.ServerError(
                    f'{name}: unknown level {level!r} (host, or one the scheduler uses: '
                    f'{", ".join(levels) or "none recorded"})')
        hints.setdefault(name, []).append(uuid if level is None else f'{level}:{uuid}')
    return hints
