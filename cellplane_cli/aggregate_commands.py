"""``cellplane aggregate ...``: host aggregates and availability zones, in the API database.

    cellplane aggregate create NAME [--zone AZ] [--property K=V ...]
    cellplane aggregate list
    cellplane aggregate show NAME
    cellplane aggregate set NAME [--property K=V ...] [--zone AZ]
    cellplane aggregate unset NAME --property K [--property K ...]
    cellplane aggregate add-host NAME HOST
    cellplane aggregate remove-host NAME HOST
    cellplane aggregate delete NAME

The zone is the metadata key ``availability_zone``. The scheduler picks the
changes up at its next host refresh (``[scheduler] host_refresh_interval``).
Every command but ``delete`` prints the aggregate (table or ``--format json``).
"""
from __future__ import annotations

from cliff import command, lister, show

from cellplane.objects import aggregates
from cellplane_cli import base, databases

COLUMNS = ('id', 'name', 'availability_zone', 'hosts', 'properties')


def _row(aggregate: aggregates.Aggregate) -> tuple:
    return (aggregate.uuid, aggregate.name, aggregate.availability_zone,
            list(aggregate.hosts), dict(aggregate.metadata))


class _AggregateCommand(base.ConfigOptionsMixin):
    """Reads ``[api_database] connection``; takes the aggregate by name or UUID."""
    takes_aggregate = True

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        if self.takes_aggregate:
            parser.add_argument('aggregate', help='name or uuid')
        return parser

    def api_engine(self, parsed_args):
        return databases.engine_for(self.load_config(parsed_args), 'api')


class AggregateCreate(_AggregateCommand, show.ShowOne):
    """Create an aggregate with no hosts; --zone makes it an availability zone."""

    takes_aggregate = False

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name')
        parser.add_argument('--zone', metavar='AZ',
                            help='availability zone of the aggregate\'s hosts')
        parser.add_argument('--property', action='append', default=[], type=base.key_value,
                            metavar='KEY=VALUE', help='metadata, e.g. ssd=true (repeatable)')
        return parser

    def take_action(self, parsed_args):
        return COLUMNS, _row(aggregates.create(
            self.api_engine(parsed_args), parsed_args.name, zone=parsed_args.zone,
            properties=dict(parsed_args.property)))


class AggregateList(base.SaysWhatItFound, _AggregateCommand, lister.Lister):
    """List aggregates by name, with their zone, hosts and metadata."""

    nothing = 'no aggregates'

    takes_aggregate = False

    def take_action(self, parsed_args):
        return COLUMNS, [_row(a) for a in aggregates.list_all(self.api_engine(parsed_args))]


class AggregateShow(_AggregateCommand, show.ShowOne):
    """Show one aggregate."""

    def take_action(self, parsed_args):
        return COLUMNS, _row(aggregates.get(self.api_engine(parsed_args),
                                            parsed_args.aggregate))


class AggregateSet(_AggregateCommand, show.ShowOne):
    """Add or change metadata; a new zone is refused if one of the hosts has another."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--zone', metavar='AZ')
        parser.add_argument('--property', action='append', default=[], type=base.key_value,
                            metavar='KEY=VALUE', help='metadata to set (repeatable)')
        return parser

    def take_action(self, parsed_args):
        return COLUMNS, _row(aggregates.set_metadata(
            self.api_engine(parsed_args), parsed_args.aggregate,
            properties=dict(parsed_args.property), zone=parsed_args.zone))


class AggregateUnset(_AggregateCommand, show.ShowOne):
    """Remove metadata keys (``--property availability_zone`` removes the zone)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--property', action='append', default=[], required=True,
                            metavar='KEY', help='metadata key to remove (repeatable)')
        return parser

    def take_action(self, parsed_args):
        return COLUMNS, _row(aggregates.unset_metadata(
            self.api_engine(parsed_args), parsed_args.aggregate, parsed_args.property))


class AggregateAddHost(_AggregateCommand, show.ShowOne):
    """Put a host (its compute service's host name) in the aggregate."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host')
        parser.add_argument('--allow-unmapped', action='store_true',
                            help='accept a host no cell has reported yet')
        return parser

    def take_action(self, parsed_args):
        return COLUMNS, _row(aggregates.add_host(
            self.api_engine(parsed_args), parsed_args.aggregate, parsed_args.host,
            allow_unmapped=parsed_args.allow_unmapped))


class AggregateRemoveHost(_AggregateCommand, show.ShowOne):
    """Take a host out of the aggregate."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host')
        return parser

    def take_action(self, parsed_args):
        return COLUMNS, _row(aggregates.remove_host(
            self.api_engine(parsed_args), parsed_args.aggregate, parsed_args.host))


class AggregateDelete(_AggregateCommand, command.Command):
    """Delete an aggregate; refused while it has hosts."""

    def take_action(self, parsed_args):
        aggregates.delete(self.api_engine(parsed_args), parsed_args.aggregate)
        return 0


COMMANDS = {'aggregate create': AggregateCreate, 'aggregate list': AggregateList,
            'aggregate show': AggregateShow, 'aggregate set': AggregateSet,
            'aggregate unset': AggregateUnset, 'aggregate add-host': AggregateAddHost,
            'aggregate remove-host': AggregateRemoveHost,
            'aggregate delete': AggregateDelete}
