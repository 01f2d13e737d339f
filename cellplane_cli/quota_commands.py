"""``cellplane quota show|set``: a project's limits (and usage), through the API role's ``cellplane_api.quotas``.

    cellplane quota show [--project P] [--usage] [--defaults]
    cellplane quota set --project P [--instances N] [--cores N] [--ram MB]
                        [--server-groups N] [--server-group-members N] [--force]
    cellplane quota delete --project P      (back to the [quota] defaults)

The same driver the compute API's ``os-quota-sets`` uses, read from
``[quota]`` and the API database; ``--usage`` also counts what the project
uses (cores and RAM from Placement, ``[placement]``). -1 is unlimited. A
limit below what is used is refused unless ``--force``. Table or
``--format json``. With ``[quota] driver = unified_limits`` the limits are
Keystone's (``[oslo_limit]``): ``show`` reads them there, ``set`` and
``delete`` are refused (one line, exit 2) and name the ``openstack limit``
command that does it.
"""
from __future__ import annotations

from cliff import command, lister

from cellplane_api import quotas
from cellplane_cli import base
from cellplane_cli.server_commands import _TopLevelCommand

# What `quota show` lists: those Nova still shows at its latest microversion.
SHOWN = quotas.COUNTED + ('metadata_items', 'key_pairs')
SETTABLE = quotas.COUNTED + ('metadata_items', 'key_pairs')


class QuotaShow(_TopLevelCommand, lister.Lister):
    """Show a project's limits (-1: unlimited), and with --usage what it uses."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', default='default', help='the project (default "default")')
        parser.add_argument('--usage', action='store_true',
                            help='also what the project uses (asks Placement)')
        parser.add_argument('--defaults', action='store_true',
                            help='the [quota] defaults instead of the project\'s limits')
        return parser

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, _cells):
            driver = self.quotas(conf, engine)
            limits = (driver.defaults() if parsed_args.defaults
                      else driver.limits(parsed_args.project))
            if not parsed_args.usage:
                return ('resource', 'limit'), [(r, limits[r]) for r in SHOWN]
            used = driver.usage(parsed_args.project).as_dict()
        return (('resource', 'limit', 'in_use'),
                [(r, limits[r], used.get(r, 0)) for r in SHOWN])


class QuotaSet(_TopLevelCommand, lister.Lister):
    """Give a project its own limits (the others keep theirs); its limits afterwards."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', required=True, help='the project')
        for resource in SETTABLE:
            parser.add_argument(f'--{resource.replace("_", "-")}', dest=resource,
                                type=base.bounded(int, minimum=-1), metavar='N',
                                help=f'{resource} (-1: unlimited)')
        parser.add_argument('--force', action='store_true',
                            help='allow a limit below what the project uses')
        return parser

    def take_action(self, parsed_args):
        changes = {r: getattr(parsed_args, r) for r in SETTABLE
                   if getattr(parsed_args, r) is not None}
        if not changes:
            raise QuotaArgumentError('give at least one limit, e.g. --instances 20')
        with self.api(parsed_args) as (conf, engine, _cells):
            limits = self.quotas(conf, engine).set_limits(parsed_args.project, changes,
                                                          force=parsed_args.force)
        return ('resource', 'limit'), [(r, limits[r]) for r in SHOWN]


class QuotaDelete(_TopLevelCommand, command.Command):
    """Remove a project's own limits: the [quota] defaults apply to it again."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', required=True, help='the project')
        return parser

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, _cells):
            self.quotas(conf, engine).forget(parsed_args.project)
        self.app.stdout.write(f'{parsed_args.project}: quotas are the defaults again\n')
        return 0


class QuotaArgumentError(Exception):
    """A bad combination of arguments: one line, exit 2."""

    exit_code = 2


COMMANDS = {'quota show': QuotaShow, 'quota set': QuotaSet, 'quota delete': QuotaDelete}
