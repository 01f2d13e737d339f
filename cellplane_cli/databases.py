"""Which database an operator command opens: the engine for api, cell or placement, as configured.

Shared by every command that reads a database directly (``cellplane-manage``
and the ``cellplane`` command line); a missing connection is a ConfigError
that names the option and the files read.
"""
from __future__ import annotations

from cellplane import config
from cellplane.db import engines
from cellplane_cli import base

_CONNECTION_OPTION = {
    'api': ('api_database', 'connection'),
    'cell': ('database', 'connection'),
    'placement': ('placement_database', 'connection'),
}



def engine_for(conf, database: str, *, chosen: bool = False):
    """The engine of ``database`` as configured, or a ConfigError naming the option.

    ``chosen``: the command's ``--database`` named it (say so in the error).
    """
    group, option = _CONNECTION_OPTION[database]
    url = conf[group][option]
    if not url:
        files = ', '.join(config.config_files(conf)) or base.where_config_was_looked_for()
        needed = (f'--database {database} needs it' if chosen
                  else f'this command reads the {database} database')
        raise config.ConfigError(f'[{group}] {option} is not set ({files}); {needed}')
    return engines.create_engine(url)
