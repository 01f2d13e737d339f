"""Flavors in the API DB (``flavors``): named sizes of instances, checked when created.

A flavor's extra specs steer scheduling: ``resources:CLASS=N`` overrides or
adds an amount of a Placement resource class (``N=0`` removes one) and
``trait:NAME=required|forbidden`` asks for or refuses a trait. They are
checked when the flavor is created, so a typo fails there and not at boot.
"""
from __future__ import annotations

import re
import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Sequence

import os_resource_classes
import os_traits
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db import reads
from cellplane.db.api.models import flavor_projects, flavors

_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')


class FlavorError(Exception):
    """A flavor request an operator must correct."""


@dataclass(frozen=True)
class FlavorRecord:
    flavorid: str
    name: str
    vcpus: int
    memory_mb: int
    root_gb: int
    extra_specs: dict[str, str] = field(default_factory=dict)
    disabled: bool = False
    # False: only the projects given access (``add_access``) and admins see it.
    is_public: bool = True
    description: str | None = None


def check_extra_specs(extra_specs: dict[str, str]) -> None:
    """Raise FlavorError for a scheduling extra spec that cannot be honoured."""
    for key, value in extra_specs.items():
        if key.startswith('resources:'):
            rc = key.split(':', 1)[1]
            if rc not in os_resource_classes.STANDARDS and not _CUSTOM.match(rc):
                raise FlavorError(f'extra spec {key}: {rc!r} is not a standard '
                                  f'resource class nor CUSTOM_*')
            if not value.isdigit():
                raise FlavorError(f'extra spec {key}={value}: the amount must be '
                                  f'a whole number >= 0')
        elif key.startswith('trait:'):
            trait = key.split(':', 1)[1]
            if not os_traits.is_custom(trait) and trait not in os_traits.get_traits():
                raise FlavorError(f'extra spec {key}: {trait!r} is not a standard '
                                  f'trait nor CUSTOM_*')
            if value not in ('required', 'forbidden'):
                raise FlavorError(f'extra spec {key}={value}: the value must be '
                                  f'"required" or "forbidden"')


NAME_MAX = 255            # flavors.name is a String(255)
AMOUNT_MAX = 2**31 - 1    # the amounts are 32-bit integer columns


def create(engine: Engine, *, name: str, vcpus: int, memory_mb: int, root_gb: int = 0,
           extra_specs: dict[str, str] | None = None, flavorid: str | None = None,
           is_public: bool = True, description: str | None = None) -> FlavorRecord:
    extra_specs = dict(extra_specs or {})
    if not name or not name.strip():
        raise FlavorError('a flavor name must not be empty or blank')
    if len(name) > NAME_MAX:
        raise FlavorError(f'a flavor name has at most {NAME_MAX} characters, not {len(name)}')
    if vcpus < 1 or memory_mb < 1 or root_gb < 0:
        raise FlavorError('a flavor needs vcpus >= 1, memory_mb >= 1 and root_gb >= 0')
    for what, amount in (('vcpus', vcpus), ('memory_mb', memory_mb), ('root_gb', root_gb)):
        if amount > AMOUNT_MAX:
            raise FlavorError(f'{what} must be at most {AMOUNT_MAX}, not {amount}')
    check_extra_specs(extra_specs)
    flavor = FlavorRecord(flavorid=flavorid or str(uuidlib.uuid4()), name=name, vcpus=vcpus,
                    memory_mb=memory_mb, root_gb=root_gb, extra_specs=extra_specs,
                    is_public=is_public, description=description)
    with engine.begin() as conn:
        clash = conn.execute(sa.select(flavors.c.name, flavors.c.flavorid).where(
            (flavors.c.name == name) | (flavors.c.flavorid == flavor.flavorid))).first()
        if clash and clash.name == name:
            raise FlavorError(f'a flavor named {name!r} exists (id {clash.flavorid})')
        if clash:
            raise FlavorError(f'a flavor with id {flavor.flavorid!r} exists '
                              f'(named {clash.name!r})')
        conn.execute(flavors.insert().values(
            flavorid=flavor.flavorid, name=name, vcpus=vcpus, memory_mb=memory_mb,
            root_gb=root_gb, extra_specs=extra_specs, is_public=is_public,
            description=description))
    return flavor


def _from_row(row) -> FlavorRecord:
    return FlavorRecord(flavorid=row.flavorid, name=row.name, vcpus=row.vcpus,
                  memory_mb=row.memory_mb, root_gb=row.root_gb,
                  extra_specs=dict(row.extra_specs or {}), disabled=bool(row.disabled),
                  is_public=bool(row.is_public), description=row.description)


def list_all(engine: Engine) -> list[FlavorRecord]:
    with engine.connect() as conn:
        return [_from_row(r) for r in conn.execute(
            sa.select(flavors).order_by(flavors.c.vcpus, flavors.c.memory_mb, flavors.c.name))]


# Every server create reads its flavor with one of these: built once, not per
# request (building a statement and its cache key costs about what running it does).
_BY_ID = sa.select(flavors).where(flavors.c.flavorid == sa.bindparam('b_id'))
_BY_NAME_OR_ID = sa.select(flavors).where((flavors.c.name == sa.bindparam('b_key'))
                                          | (flavors.c.flavorid == sa.bindparam('b_key')))


def find(engine: Engine, flavorid: str) -> FlavorRecord | None:
    """The flavor with this id (not name), or None (read without a transaction: ``reads``)."""
    with reads.connect(engine) as conn:
        row = conn.execute(_BY_ID, {'b_id': flavorid}).first()
    return None if row is None else _from_row(row)


def row_ids(engine: Engine, flavorids: Sequence[str]) -> dict[str, int]:
    """flavorid -> the flavor's row id (Nova's ``instance_type_id``), for those that exist."""
    wanted = sorted(set(flavorids))
    if not wanted:
        return {}
    with engine.connect() as conn:
        return {r.flavorid: r.id for r in conn.execute(
            sa.select(flavors.c.flavorid, flavors.c.id).where(flavors.c.flavorid.in_(wanted)))}


def get(engine: Engine, name_or_id: str) -> FlavorRecord:
    with engine.connect() as conn:
        row = conn.execute(_BY_NAME_OR_ID, {'b_key': name_or_id}).first()
    if row is None:
        raise FlavorError(f'no flavor named or with id {name_or_id!r}')
    return _from_row(row)


def delete(engine: Engine, name_or_id: str) -> None:
    flavor = get(engine, name_or_id)
    with engine.begin() as conn:
        row_id = conn.execute(sa.select(flavors.c.id).where(
            flavors.c.flavorid == flavor.flavorid)).scalar()
        conn.execute(flavor_projects.delete().where(flavor_projects.c.flavor_id == row_id))
        conn.execute(flavors.delete().where(flavors.c.id == row_id))


class FlavorNotFound(FlavorError):
    """No flavor has this id."""


def _by_id(conn, flavorid: str):
    row = conn.execute(sa.select(flavors).where(flavors.c.flavorid == flavorid)
                       .with_for_update()).first()
    if row is None:
        raise FlavorNotFound(f'no flavor with id {flavorid!r}')
    return row


def set_extra_specs(engine: Engine, flavorid: str, extra_specs: dict[str, str]) -> dict[str, str]:
    """Add or change ``extra_specs`` of the flavor with this id (checked first); all of them after."""
    check_extra_specs(extra_specs)
    with engine.begin() as conn:
        merged = {**dict(_by_id(conn, flavorid).extra_specs or {}), **extra_specs}
        conn.execute(flavors.update().where(flavors.c.flavorid == flavorid)
                     .values(extra_specs=merged))
    return merged


def set_description(engine: Engine, flavorid: str, description: str | None) -> FlavorRecord:
    """Replace (None: remove) the description of the flavor with this id; the flavor after."""
    with engine.begin() as conn:
        _by_id(conn, flavorid)
        conn.execute(flavors.update().where(flavors.c.flavorid == flavorid)
                     .values(description=description))
        return _from_row(_by_id(conn, flavorid))


def unset_extra_spec(engine: Engine, flavorid: str, key: str) -> None:
    """Remove one extra spec; ``KeyError`` if the flavor has none by that key."""
    with engine.begin() as conn:
        specs = dict(_by_id(conn, flavorid).extra_specs or {})
        if key not in specs:
            raise KeyError(key)
        del specs[key]
        conn.execute(flavors.update().where(flavors.c.flavorid == flavorid)
                     .values(extra_specs=specs))


class FlavorAccessError(FlavorError):
    """An access change that cannot be made: a public flavor, a project already or never there."""


def projects_with_access(engine: Engine, flavorids: list[str] | None = None) -> dict[str, list[str]]:
    """Flavor id -> the projects given access to it (private flavors only have any), sorted."""
    query = (sa.select(flavors.c.flavorid, flavor_projects.c.project_id)
             .join(flavors, flavors.c.id == flavor_projects.c.flavor_id)
             .order_by(flavor_projects.c.project_id))
    if flavorids is not None:
        query = query.where(flavors.c.flavorid.in_(list(flavorids)))
    found: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for flavorid, project_id in conn.execute(query):
            found.setdefault(flavorid, []).append(project_id)
    return found


def add_access(engine: Engine, flavorid: str, project_id: str) -> list[str]:
    """Let ``project_id`` see and boot the private flavor; the projects that may, after."""
    with engine.begin() as conn:
        row = _by_id(conn, flavorid)
        if row.is_public:
            raise FlavorAccessError(f'flavor {flavorid} is public: every project has access')
        there = conn.execute(sa.select(flavor_projects.c.id).where(
            (flavor_projects.c.flavor_id == row.id)
            & (flavor_projects.c.project_id == project_id))).first()
        if there:
            raise FlavorAccessError(f'flavor {flavorid} already has access for project '
                                    f'{project_id}')
        conn.execute(flavor_projects.insert().values(flavor_id=row.id, project_id=project_id))
    return projects_with_access(engine, [flavorid]).get(flavorid, [])


def remove_access(engine: Engine, flavorid: str, project_id: str) -> list[str]:
    """Take the private flavor away from ``project_id``; the projects that may still, after."""
    with engine.begin() as conn:
        row = _by_id(conn, flavorid)
        gone = conn.execute(flavor_projects.delete().where(
            (flavor_projects.c.flavor_id == row.id)
            & (flavor_projects.c.project_id == project_id))).rowcount
        if not gone:
            raise FlavorAccessError(f'flavor {flavorid} has no access for project {project_id}')
    return projects_with_access(engine, [flavorid]).get(flavorid, [])
