"""What every cellplane command-line tool shares: cliff apps and config options.

Both ``cellplane`` and ``cellplane-manage`` are cliff applications, so every
listing or showing command gets ``--format table|json|...`` from cliff's
formatters. Commands that need configuration take ``--config-file``
(repeatable) and ``--config-dir`` after the command name, like the daemons;
without them, ``$CELLPLANE_CONFIG`` or ``/etc/cellplane/cellplane.conf``.
"""
from __future__ import annotations

import argparse
import datetime
import logging
import math
import os
import sys
from typing import Callable, Iterable

from cliff import app, command, commandmanager
from oslo_config import cfg

from cellplane import config

VERSION = '0.1.0'
USER_CONFIG_FILE = '/etc/cellplane/cellplane.conf'
CONFIG_ENV = 'CELLPLANE_CONFIG'


def default_config_files() -> list[str]:
    """Where a command without --config-file/--config-dir reads its configuration.

    ``$CELLPLANE_CONFIG`` (a file path; a missing file is an error naming
    it), else ``/etc/cellplane/cellplane.conf`` if it exists, else nothing.
    """
    from_env = os.environ.get(CONFIG_ENV)
    if from_env:
        return [from_env]
    return [USER_CONFIG_FILE] if os.path.exists(USER_CONFIG_FILE) else []


def where_config_was_looked_for() -> str:
    """For an error when no file was read: what to give, in the order it is looked for."""
    return (f'no config file: give --config-file, set {CONFIG_ENV}, or create '
            f'{USER_CONFIG_FILE}')


def key_value(text: str) -> tuple[str, str]:
    """An argparse type for ``KEY=VALUE`` arguments (properties, extra specs)."""
    key, sep, value = text.partition('=')
    if not sep or not key:
        raise argparse.ArgumentTypeError(f'expected KEY=VALUE, got {text!r}')
    return key, value


def bounded(kind: Callable[[str], int | float], *, minimum: float | None = None,
            maximum: float | None = None) -> Callable[[str], int | float]:
    """An argparse type: a number of ``kind`` (int or float) from ``minimum`` to ``maximum``.

    A value out of range is a usage error (one line, exit 2) that states the
    range, e.g. ``argument --count: must be from 1 to 1000, not 0``.
    """
    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f'expected {"a whole number" if kind is int else "a number"}, '
                f'got {text!r}') from None
        if not math.isfinite(value) or (minimum is not None and value < minimum) \
                or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(
                f'must be {describe_range(minimum, maximum)}, not {text}')
        return value
    convert.__name__ = getattr(kind, '__name__', 'number')
    return convert


def describe_range(minimum: float | None, maximum: float | None) -> str:
    """'from 1 to 1000', '0 or more', 'at most 5' (or 'a finite number')."""
    def shown(number: float) -> str:
        return str(int(number)) if float(number).is_integer() else f'{number:g}'
    if minimum is not None and maximum is not None:
        return f'from {shown(minimum)} to {shown(maximum)}'
    if minimum is not None:
        return f'{shown(minimum)} or more'
    if maximum is not None:
        return f'at most {shown(maximum)}'
    return 'a finite number'


class SaysWhatItFound:
    """A listing command that ends its table with a summary line (what it found or changed).

    An empty table says nothing, so a command that found nothing would look
    as if it had not run. ``summary`` returns the line; it is written after
    the table only (``--format json``, ``csv`` and ``value`` stay data: an
    empty list stays an empty list).
    """

    # What an empty listing says, for a command that needs no more than that.
    nothing: str | None = None

    def summary(self, parsed_args, rows: list) -> str | None:
        return None if rows else self.nothing

    def produce_output(self, parsed_args, column_names, data):
        rows = list(data)
        said = self.summary(parsed_args, rows) if parsed_args.formatter == 'table' else None
        # An empty table is a blank line: the summary alone says it better.
        result = 0 if said and not rows else super().produce_output(
            parsed_args, column_names, rows)
        if said:
            self.app.stdout.write(said + '\n')
        return result


def iso8601(moment: datetime.datetime | None, *, timespec: str = 'seconds') -> str | None:
    """A time as the CLI prints it: ISO 8601 in UTC with its offset, '2026-11-26T14:30:05+00:00'.

    The databases keep naive UTC times (``cellplane.db.columns.utcnow``): one without
    an offset is taken for UTC.
    """
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).isoformat(timespec=timespec)


def count(n: int, singular: str, plural: str | None = None) -> str:
    """'0 servers', '1 server', '2 servers'."""
    return f'{n} {singular if n == 1 else (plural or singular + "s")}'


class ConfigOptionsMixin:
    """Adds --config-file/--config-dir to a command and loads them on demand."""

    registrars: Iterable[Callable[[cfg.ConfigOpts], None]] = ()

    def add_config_arguments(self, parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument('--config-file', action='append', default=[],
                            metavar='PATH', help='a config file (repeatable)')
        parser.add_argument('--config-dir', action='append', default=[],
                            metavar='DIR', help='a directory of *.conf files')
        return parser

    def load_config(self, parsed_args) -> cfg.ConfigOpts:
        if not parsed_args.config_file and not parsed_args.config_dir:
            parsed_args.config_file = default_config_files()
        argv = []
        for path in parsed_args.config_file:
            argv += ['--config-file', path]
        for path in parsed_args.config_dir:
            argv += ['--config-dir', path]
        return config.load(argv, prog=self.app.NAME, registrars=self.registrars,
                           setup_logging=False)


class OneLineUsageErrors:
    """A command whose bad arguments are said in one line (exit 2), not after the whole usage."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)

        def error(message: str):
            parser.exit(2, f'{parser.prog}: error: {message} (see --help)\n')
        parser.error = error
        return parser


class CellplaneApp(app.App):
    """A cliff app that turns ``ConfigError`` into a one-line error and exit 2.

    Every command's bad arguments are one line too (``OneLineUsageErrors``).
    """

    NAME = 'cellplane'

    def __init__(self, description: str, commands: dict[str, type[command.Command]]):
        manager = commandmanager.CommandManager(None)
        for name, cls in commands.items():
            manager.add_command(name, type(cls.__name__, (OneLineUsageErrors, cls),
                                           {'__doc__': cls.__doc__}))
        super().__init__(description=description, version=VERSION,
                         command_manager=manager, deferred_help=True)

    # Libraries whose INFO lines are noise to an operator unless asked (-v).
    QUIET_LOGGERS = ('alembic', 'stevedore')

    def initialize_app(self, argv):
        if self.options.verbose_level <= 1:
            for name in self.QUIET_LOGGERS:
                logging.getLogger(name).setLevel(logging.WARNING)

    def run_subcommand(self, argv):
        self._config_error = False
        result = super().run_subcommand(argv)
        # cliff reports the error itself; a configuration problem exits 2.
        return 2 if self._config_error else result

    def clean_up(self, cmd, result, err):
        # A configuration problem, or a usage error a command found in its
        # arguments (an exception with ``exit_code = 2``).
        if isinstance(err, config.ConfigError) or getattr(err, 'exit_code', None) == 2:
            self._config_error = True


def run(app_cls, argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    return app_cls().run(argv)
