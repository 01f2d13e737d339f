"""``cellplane``: the user-facing command line (the API role).

    cellplane flavor create NAME --vcpus N --ram MB [--disk GB] [--property K=V ...]
    cellplane flavor list|show|delete
    cellplane server create NAME --flavor F [--count N] [--image-property K=V ...]
                            [--availability-zone AZ] [--wait [--timeout S]]
    cellplane server list|show ID|events ID|delete ID
    cellplane server migrate SERVER [--wait]    cellplane server resize SERVER --flavor F [--wait]
    cellplane server resize confirm|revert SERVER [--wait]
    cellplane server live-migrate SERVER [--host HOST] [--wait]
    cellplane server live-migration abort SERVER [MIGRATION] [--wait]
    cellplane server migration list [--server S] [--status ST]|show MIGRATION
    cellplane scheduler records [--last N] [--request-id R] [--instance ID]
    cellplane aggregate create NAME [--zone AZ] [--property K=V ...]
    cellplane aggregate list|show|set|unset|add-host|remove-host|delete
    cellplane failure-domain create LEVEL NAME [--host HOST ...] [--contains LEVEL:NAME ...]
    cellplane failure-domain add-host|remove-host DOMAIN HOST [HOST ...]
    cellplane failure-domain add-domain|remove-domain DOMAIN LEVEL:NAME [LEVEL:NAME ...]
    cellplane failure-domain list [--level L]|show|delete|levels|sync
    cellplane quota show [--project P] [--usage] [--defaults]
    cellplane quota set --project P [--instances N] [--cores N] [--ram MB] ... [--force]
    cellplane quota delete --project P
    cellplane demo [--format json]

Commands that touch the API database read ``[api_database] connection``
from ``--config-file`` (default: /etc/cellplane/cellplane.conf when present);
``server create`` and ``server delete`` also cast over the top-level bus
(``[DEFAULT] transport_url``) and, for a delete or a live migration's
abort, a cell's bus from its mapping.
"""
from __future__ import annotations

import sys

from cliff import command, lister, show

from cellplane.objects import flavors
from cellplane_cli import (
    aggregate_commands,
    base,
    databases,
    demo,
    failure_domain_commands,
    move_commands,
    quota_commands,
    scheduler_commands,
    server_commands,
    server_group_commands,
)


class _ApiCommand(base.ConfigOptionsMixin):
    def get_parser(self, prog_name):
        return self.add_config_arguments(super().get_parser(prog_name))

    def api_engine(self, parsed_args):
        return databases.engine_for(self.load_config(parsed_args), 'api')


_FLAVOR_COLUMNS = ('id', 'name', 'vcpus', 'memory_mb', 'root_gb', 'extra_specs', 'disabled')


def _flavor_row(f: flavors.FlavorRecord):
    return (f.flavorid, f.name, f.vcpus, f.memory_mb, f.root_gb, f.extra_specs, f.disabled)


class FlavorCreate(_ApiCommand, show.ShowOne):
    """Create a flavor; scheduling extra specs are checked now, not at boot."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name')
        parser.add_argument('--vcpus', required=True,
                            type=base.bounded(int, minimum=1, maximum=flavors.AMOUNT_MAX))
        parser.add_argument('--ram', required=True, metavar='MB',
                            type=base.bounded(int, minimum=1, maximum=flavors.AMOUNT_MAX))
        parser.add_argument('--disk', default=0, metavar='GB',
                            type=base.bounded(int, minimum=0, maximum=flavors.AMOUNT_MAX))
        parser.add_argument('--id', dest='flavorid', help='flavor id (default: a uuid)')
        parser.add_argument('--property', action='append', default=[], type=base.key_value,
                            metavar='KEY=VALUE',
                            help='extra spec, e.g. resources:CUSTOM_GPU=1 or '
                                 'trait:HW_CPU_X86_AVX2=required (repeatable)')
        return parser

    def take_action(self, parsed_args):
        flavor = flavors.create(
            self.api_engine(parsed_args), name=parsed_args.name, vcpus=parsed_args.vcpus,
            memory_mb=parsed_args.ram, root_gb=parsed_args.disk,
            extra_specs=dict(parsed_args.property), flavorid=parsed_args.flavorid)
        return _FLAVOR_COLUMNS, _flavor_row(flavor)


class FlavorList(base.SaysWhatItFound, _ApiCommand, lister.Lister):
    """List flavors, smallest first."""

    nothing = 'no flavors'

    def take_action(self, parsed_args):
        return _FLAVOR_COLUMNS, [_flavor_row(f) for f in flavors.list_all(self.api_engine(parsed_args))]


class FlavorShow(_ApiCommand, show.ShowOne):
    """Show one flavor by name or id."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', help='name or id')
        return parser

    def take_action(self, parsed_args):
        return _FLAVOR_COLUMNS, _flavor_row(flavors.get(self.api_engine(parsed_args), parsed_args.flavor))


class FlavorDelete(_ApiCommand, command.Command):
    """Delete a flavor by name or id."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', help='name or id')
        return parser

    def take_action(self, parsed_args):
        flavors.delete(self.api_engine(parsed_args), parsed_args.flavor)
        return 0


class CellplaneCLI(base.CellplaneApp):
    NAME = 'cellplane'

    def __init__(self):
        super().__init__(
            description='cellplane: place instances across cells, with claims and alternates.',
            commands={'flavor create': FlavorCreate, 'flavor list': FlavorList,
                      'flavor show': FlavorShow, 'flavor delete': FlavorDelete,
                      'demo': demo.Demo, **server_commands.COMMANDS,
                      **scheduler_commands.COMMANDS, **aggregate_commands.COMMANDS,
                      **failure_domain_commands.COMMANDS,
                      **server_group_commands.COMMANDS, **quota_commands.COMMANDS,
                      **move_commands.COMMANDS})


def main(argv: list[str] | None = None) -> int:
    return base.run(CellplaneCLI, argv)


if __name__ == '__main__':
    sys.exit(main())
