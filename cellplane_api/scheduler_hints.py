"""Scheduler hints about other instances: ``--hint NAME=VALUE`` checked and resolved to uuids.

    same_host=INSTANCE            on the host INSTANCE runs on
    different_host=INSTANCE       not on it
    same_domain=LEVEL:INSTANCE    in the domain at LEVEL INSTANCE is in (a rack, a row ...)
    different_domain=LEVEL:INSTANCE  outside it

INSTANCE is a server id or name. LEVEL is ``host`` or a level the
scheduler recorded. The request spec carries them as
``{"different_domain": ["row:<uuid>"], "same_host": ["<uuid>"]}``: the
names and that form are the wire contract's (``rpc_schemas.scheduler_hints``).
"""
from __future__ import annotations

from typing import Iterable

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.objects import failure_domain_levels
from cellplane_api import servers
from cellplane_api.conf import DEFAULT_CELL_TIMEOUT
from rpc_schemas.request_spec import HOST_LEVEL
from rpc_schemas.scheduler_hints import (
    DIFFERENT_HOST,
    HINTS,
    HOST_HINTS,
    SAME_DOMAIN,
    SAME_HOST,
    domain_value,
    split_domain_value,
)


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
    level, instance = split_domain_value(value)
    if not level or not instance:
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
        if level == HOST_LEVEL:
            # At the host level a domain hint is the host hint.
            name, level = (SAME_HOST if name == SAME_DOMAIN else DIFFERENT_HOST), None
        if level is not None:
            levels = failure_domain_levels.levels(api_engine) if levels is None else levels
            if level not in levels:
                raise servers.ServerError(
                    f'{name}: unknown level {level!r} (host, or one the scheduler uses: '
                    f'{", ".join(levels) or "none recorded"})')
        hints.setdefault(name, []).append(uuid if level is None else domain_value(level, uuid))
    return hints
