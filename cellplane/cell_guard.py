"""The rule that makes an upcall impossible: cell services hold no top-level option.

A cell conductor or compute agent that could reach the API database or the
top-level message bus could call upward; cellplane makes that impossible by
refusing to start such a service. The top level is recognised by the API
database: its connection option, and any config file with an
``[api_database]`` section (such a file is a top-level file, and its
``transport_url`` is the top-level bus).
"""
from __future__ import annotations

from oslo_config import cfg

from cellplane import config

TOP_LEVEL_SECTION = 'api_database'


def refuse_top_level_options(conf: cfg.ConfigOpts, service_name: str) -> None:
    """Raise ``ConfigError`` if ``conf`` gives a cell service a top-level option."""
    if conf.api_database.connection:
        where = config.describe_location(conf, 'connection', TOP_LEVEL_SECTION)
        raise config.ConfigError(
            f'{service_name} is a cell service and must not be given '
            f'[{TOP_LEVEL_SECTION}] connection{where}: cell services never '
            f'reach the API database. Remove the option, or start the service '
            f'without the top-level config file.')
    for path in config.config_files(conf):
        if _has_section(path, TOP_LEVEL_SECTION):
            raise config.ConfigError(
                f'{service_name} is a cell service and must not read the '
                f'top-level config file {path} (it has an [{TOP_LEVEL_SECTION}] '
                f'section, so its transport_url is the top-level bus). Give it '
                f'only its cell\'s config files.')


def _has_section(path: str, section: str) -> bool:
    sections: dict = {}
    cfg.ConfigParser(path, sections).parse()
    return section in sections


def refuse_database_credentials(conf: cfg.ConfigOpts, service_name: str) -> None:
    """Raise ``ConfigError`` if a compute agent is given any database connection.

    Compute agents change state only through their cell conductor; holding a
    database URL would let a compromised hypervisor host write to the cell.
    """
    refuse_top_level_options(conf, service_name)
    if conf.database.connection:
        where = config.describe_location(conf, 'connection', 'database')
        raise config.ConfigError(
            f'{service_name} must not be given [database] connection{where}: '
            f'compute agents hold no database credentials and report through '
            f'their cell conductor. Remove the option.')
