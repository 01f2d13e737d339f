"""``cellplane-manage``: operator commands that act on databases directly.

    cellplane-manage db sync --database api|cell|placement --config-file F
    cellplane-manage db version --database ... [--format json]

Which connection each database uses comes from the config files:
``[api_database] connection``, ``[database] connection`` (the cell database)
or ``[placement_database] connection``.
"""
from __future__ import annotations

import argparse
import json
import sys

from cellplane import config
from cellplane.db import engines, migrate

_CONNECTION_OPTION = {
    'api': ('api_database', 'connection'),
    'cell': ('database', 'connection'),
    'placement': ('placement_database', 'connection'),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='cellplane-manage',
        description='Operator commands acting on cellplane databases.',
        epilog='Any --config-file/--config-dir arguments are passed to the '
               'configuration loader.')
    sub = parser.add_subparsers(dest='category', required=True)
    db = sub.add_parser('db', help='database schema commands')
    db_sub = db.add_subparsers(dest='action', required=True)
    for action, help_text in (('sync', 'create or upgrade the schema'),
                              ('version', 'show the schema revision')):
        p = db_sub.add_parser(action, help=help_text)
        p.add_argument('--database', required=True, choices=sorted(migrate.HISTORIES),
                       help='which database')
        if action == 'version':
            p.add_argument('--format', choices=['table', 'json'], default='table')
    return parser


def _registrars():
    from placement import conf as placement_conf
    return [placement_conf.register_opts]


def _engine_for(conf, database: str):
    group, option = _CONNECTION_OPTION[database]
    url = conf[group][option]
    if not url:
        files = ', '.join(config.config_files(conf)) or 'no config file given'
        raise config.ConfigError(
            f'[{group}] {option} is not set ({files}); it is needed for '
            f'--database {database}')
    return engines.create_engine(url)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args, rest = _parser().parse_known_args(argv)
    try:
        conf = config.load(rest, prog='cellplane-manage', registrars=_registrars())
        engine = _engine_for(conf, args.database)
        if args.action == 'sync':
            migrate.sync(args.database, engine)
            print(f'{args.database} database at revision '
                  f'{migrate.current_revision(args.database, engine)}')
        else:
            current = migrate.current_revision(args.database, engine)
            head = migrate.head_revision(args.database, engine)
            if args.format == 'json':
                print(json.dumps({'database': args.database, 'current': current,
                                  'head': head, 'up_to_date': current == head}))
            else:
                print(f'{"database":<10} {"current":<10} {"head":<10}')
                print(f'{args.database:<10} {current or "-":<10} {head or "-":<10}')
    except config.ConfigError as exc:
        print(f'cellplane-manage: error: {exc}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
