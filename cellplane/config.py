"""Loading a service's configuration: files, validation, logging.

Every cellplane command calls ``load``: it registers the shared options and
the service's own, reads ``--config-file`` (repeatable) and ``--config-dir``,
checks every value once so that a bad one is reported at start-up naming the
option and the file it came from, and sets up oslo.log.

oslo.messaging registers some of its options only on the global
``cfg.CONF``, so daemons use that object (see ARCHITECTURE.md).
"""
from __future__ import annotations

import glob
import os
from typing import Callable, Iterable, Sequence

from oslo_config import cfg
from oslo_log import log as oslo_logging

from cellplane import conf as shared_conf

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
    return conf


def _registered(conf: cfg.ConfigOpts) -> bool:
    try:
        conf.api_database  # noqa: B018 - probing for registration
        return True
    except cfg.NoSuchOptError:
        return False


def check_values(conf: cfg.ConfigOpts) -> None:
    """Read every registered option once; name option and file on a bad value."""
    for name in conf:
        value = _read(conf, name, None, lambda: conf[name])
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for sub in value:
                _read(conf, sub, name, lambda: value[sub])


def _read(conf: cfg.ConfigOpts, opt_name: str, group_name: str | None, getter):
    try:
        return getter()
    except (cfg.ConfigFileValueError, ValueError) as exc:
        where = describe_location(conf, opt_name, group_name)
        section = group_name or 'DEFAULT'
        raise ConfigError(
            f'invalid value for [{section}] {opt_name}{where}: {exc}') from exc


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


def config_files(conf: cfg.ConfigOpts) -> list[str]:
    """The files this configuration was read from, in reading order."""
    files = list(conf.config_file or [])
    for directory in conf.config_dir or []:
        files.extend(sorted(glob.glob(os.path.join(directory, '*.conf'))))
    return files
