"""Loading a service's configuration: files, validation, logging.

Every cellplane command calls ``load``: it registers the shared options and
the service's own, reads ``--config-file`` (repeatable) and ``--config-dir``,
checks every value once so that a bad one is reported at start-up naming the
option and the file it came from, and sets up oslo.log.

oslo.messaging registers some of its options only on the global
``cfg.CONF``, so daemons use that object (see ARCHITECTURE.md).
"""
from __future__ import annotations

import difflib
import functools
import glob
import importlib.metadata
import logging
import os
from typing import Callable, Iterable, Sequence

from oslo_config import cfg
from oslo_log import log as oslo_logging

from cellplane import conf as shared_conf

LOG = logging.getLogger(__name__)

Registrar = Callable[[cfg.ConfigOpts], None]


class ConfigError(Exception):
    """A configuration problem an operator must fix; the message says where."""


def load(argv: Sequence[str], *, prog: str, registrars: Iterable[Registrar] = (),
         conf: cfg.ConfigOpts | None = None, setup_logging: bool = True,
         version: str = '0.1.0') -> cfg.ConfigOpts:
    """Parse ``argv`` (without the program name) into ``conf`` and validate it."""
    conf = cfg.CONF if conf is None else conf
    if not _registered(conf):
        shared_conf.register_opts(conf)
        oslo_logging.register_options(conf)
    for register in registrars:
        register(conf)
    try:
        conf(list(argv), project='cellplane', prog=prog, version=version,
             default_config_files=[], default_config_dirs=[])
    except cfg.ConfigFilesNotFoundError as exc:
        raise ConfigError(f'config file not found: {", ".join(exc.config_files)}') from exc
    except cfg.ConfigFileParseError as exc:
        raise ConfigError(f'cannot parse config file {exc.config_file}: {exc.msg}') from exc
    except cfg.ConfigDirNotFoundError as exc:
        raise ConfigError(f'config directory not found: {exc.config_dir}') from exc
    check_values(conf)
    if setup_logging:
        oslo_logging.setup(conf, 'cellplane')
    warn_misspelled_options(conf)
    return conf


def warn_misspelled_options(conf: cfg.ConfigOpts) -> list[str]:
    """Warn about each option of a known section that is close to a known option but is not one.

    And about each section that is close to a known section but is not one
    (``[schedular]``: every option in it would be ignored).

    oslo.config ignores an option it does not know, so ``host_refresh_interva``
    would silently leave the default in force. Only near-misses are reported
    (a close match among the section's options): a file shared by several
    services, or holding a library's options, stays quiet. Returns the
    warnings (also logged).
    """
    warnings = []
    for path in config_files(conf):
        sections: dict = {}
        try:
            cfg.ConfigParser(path, sections).parse()
        except Exception:  # noqa: BLE001 - load() already reported unreadable files
            continue
        for section, options in sections.items():
            group = None if section == 'DEFAULT' else section
            known = _option_names(conf, group)
            if known is None:
                warnings += _unknown_section(conf, path, section)
                continue
            for name in options:
                if name in known or _is_deprecated_name(conf, group, name):
                    continue
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
                if close:
                    warnings.append(f'{path}: [{section}] {name} is not an option of '
                                    f'{conf.prog or "this service"} and is ignored; did '
                                    f'you mean {close[0]}?')
    for warning in warnings:
        LOG.warning('%s', warning)
    return warnings


# A misspelled section is as close to a real one as ``schedular`` is to
# ``scheduler``; ``database`` and ``api_database`` (0.8) are two real ones.
SECTION_CUTOFF = 0.85


def _unknown_section(conf: cfg.ConfigOpts, path: str, section: str) -> list[str]:
    """A warning for a section this service does not know that is close to one it does.

    A section another service or a library defines (a file shared by
    several services) is left alone, however close.
    """
    groups = [name for name in conf if isinstance(conf[name], cfg.ConfigOpts.GroupAttr)]
    close = difflib.get_close_matches(section, groups, n=1, cutoff=SECTION_CUTOFF)
    if not close or section in sections_of_cellplane():
        return []
    return [f'{path}: [{section}] is not a section of {conf.prog or "this service"} and '
            f'is ignored; did you mean [{close[0]}]?']


@functools.lru_cache(maxsize=1)
def sections_of_cellplane() -> frozenset[str]:
    """Every section cellplane's services define (their ``oslo.config.opts`` namespaces, as the samples are made).

    Read only when a section looks misspelled, and only cellplane's own
    namespaces: no two sections of the libraries' are as close as
    ``SECTION_CUTOFF`` to each other or to ours. A namespace that cannot be
    loaded is skipped: at worst a real section of it is warned about.
    """
    found = set()
    for entry in importlib.metadata.entry_points(group='oslo.config.opts'):
        if not entry.name.startswith('cellplane'):
            continue
        try:
            listed = entry.load()()
        except Exception:  # noqa: BLE001 - someone else's plugin; see the docstring
            continue
        for group, _opts in listed:
            name = getattr(group, 'name', group)
            if name:
                found.add(name)
    return frozenset(found)


def _option_names(conf: cfg.ConfigOpts, group: str | None) -> list[str] | None:
    """The options registered in ``group`` (None: DEFAULT), or None for an unknown section."""
    if group is None:
        return [name for name in conf if not isinstance(conf[name], cfg.ConfigOpts.GroupAttr)]
    try:
        return list(conf[group])
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, KeyError):
        return None


def _is_deprecated_name(conf: cfg.ConfigOpts, group: str | None, name: str) -> bool:
    try:
        (conf[group] if group else conf)[name]
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, KeyError):
        return False
    except Exception:  # noqa: BLE001 - a value error: it is an option all the same
        return True
    return True


def _registered(conf: cfg.ConfigOpts) -> bool:
    try:
        conf.api_database  # noqa: B018 - probing for registration
        return True
    except cfg.NoSuchOptError:
        return False


def check_values(conf: cfg.ConfigOpts) -> None:
    """Read every registered option once; name option and file on a bad value."""
    for name in conf:
        value = _read(conf, name, None, lambda name=name: conf[name])
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for sub in value:
                _read(conf, sub, name, lambda value=value, sub=sub: value[sub])


def _read(conf: cfg.ConfigOpts, opt_name: str, group_name: str | None, getter):
    try:
        return getter()
    except (cfg.ConfigFileValueError, ValueError) as exc:
        where = describe_location(conf, opt_name, group_name)
        section = group_name or 'DEFAULT'
        raise ConfigError(
            f'invalid value for [{section}] {opt_name}{where}: {_why(exc)}') from exc


def _why(exc: Exception) -> str:
    """What is wrong with a value, without oslo.config's "Value for option X from LocationInfo(...) is not valid:"."""
    text = str(exc)
    _, sep, why = text.partition(' is not valid: ')
    return why if sep and 'LocationInfo(' in text else text


def describe_location(conf: cfg.ConfigOpts, opt_name: str, group: str | None) -> str:
    """' (in /etc/cellplane/x.conf)' for an option set in a file, else ''."""
    try:
        loc = conf.get_location(opt_name, group)
    except (cfg.NoSuchOptError, ValueError, cfg.ConfigFileValueError):
        loc = None
    if loc is not None and loc.location == cfg.Locations.user and loc.detail:
        return f' (in {loc.detail})'
    files = config_files(conf)
    return f' (in {", ".join(files)})' if files else ''


def name_option(conf: cfg.ConfigOpts, opt_name: str, group: str | None, *,
                label: str | None = None) -> str:
    """``[group] opt_name, in /etc/cellplane/x.conf`` (``label`` in place of the name), for an error."""
    where = describe_location(conf, opt_name, group).strip()
    label = label or f'[{group or "DEFAULT"}] {opt_name}'
    return label + (f', {where[1:-1]}' if where else '')


def config_files(conf: cfg.ConfigOpts) -> list[str]:
    """The files this configuration was read from, in reading order."""
    files = list(conf.config_file or [])
    for directory in conf.config_dir or []:
        files.extend(sorted(glob.glob(os.path.join(directory, '*.conf'))))
    return files
