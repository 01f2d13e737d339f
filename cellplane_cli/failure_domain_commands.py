"""``cellplane failure-domain ...`` and ``cellplane-manage failure-domain record-levels``: racks, rows, rooms.

    cellplane failure-domain create LEVEL NAME [--host HOST ...] [--contains LEVEL:NAME ...]
    cellplane failure-domain add-host DOMAIN HOST [HOST ...]
    cellplane failure-domain remove-host DOMAIN HOST [HOST ...]
    cellplane failure-domain add-domain|remove-domain DOMAIN LEVEL:NAME [LEVEL:NAME ...]
    cellplane failure-domain list [--level LEVEL]
    cellplane failure-domain show DOMAIN
    cellplane failure-domain delete DOMAIN
    cellplane failure-domain levels
    cellplane failure-domain sync
    cellplane-manage failure-domain record-levels

DOMAIN is ``LEVEL:NAME`` or the domain's uuid (its Placement aggregate).
The levels are those the scheduler recorded in the API database when it
started (``[scheduler] failure_domain_levels``), not this command's config
file; ``record-levels`` records those of its own config file instead. The
commands that change a domain update Placement (``[placement]``) and print
what they did in the ``placement`` column; when Placement cannot be
updated they exit 1 and ``sync`` repairs it. Every command prints a table,
or JSON with ``--format json``.
"""
from __future__ import annotations

import argparse

from cliff import lister, show

from cellplane.objects import failure_domain_levels
from cellplane.objects import failure_domains as domains_db
from cellplane.objects.failure_domains import FailureDomain
from cellplane_api import failure_domains
from cellplane_cli import base, databases
from placement import client_conf
from scheduler import conf as scheduler_conf

COLUMNS = ('id', 'level', 'name', 'hosts', 'own_hosts', 'contains', 'contained_in')
WRITE_COLUMNS = COLUMNS + ('placement',)
PROGRAM = 'cellplane failure-domain'


def _row(domain: FailureDomain) -> tuple:
    return (domain.uuid, domain.level, domain.name, list(domain.hosts),
            list(domain.own_hosts), list(domain.contains), list(domain.contained_in))


class Refused(Exception):
    """A failure-domain request refused, worded for the operator (cliff prints it; exit 1)."""


def for_operator(exc: domains_db.FailureDomainError) -> str:
    """What is wrong, and for the refusals that have one, the command that repairs it."""
    if isinstance(exc, domains_db.DomainNotFound):
        return f'{exc} (give LEVEL:NAME or its uuid); see `cellplane failure-domain list`'
    if isinstance(exc, domains_db.HostNotMapped):
        return (f'{exc} (the scheduler maps the hosts it reads; `cellplane-manage cell '
                f'discover-hosts` maps new ones now)')
    if isinstance(exc, domains_db.DomainInUse):
        if exc.containers:
            return (f'{exc}; take it out first (`{PROGRAM} remove-domain '
                    f'{exc.containers[0]} {exc.label}`)')
        return f'{exc}; remove them first (`{PROGRAM} remove-host {exc.label} HOST ...`)'
    return str(exc)


def domain_ref(text: str) -> str:
    """An argparse type for ``--contains``: ``LEVEL:NAME``."""
    try:
        domains_db.parse_ref(text)
    except domains_db.FailureDomainError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


class _Command(base.ConfigOptionsMixin):
    """Reads ``[api_database] connection`` (and ``[placement]`` to change a domain)."""

    registrars = (client_conf.register_opts,)
    takes_domain = True

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        if self.takes_domain:
            parser.add_argument('domain', help='LEVEL:NAME or uuid')
        return parser

    def api_engine(self, parsed_args):
        self.conf = self.load_config(parsed_args)
        return databases.engine_for(self.conf, 'api')

    def placement(self):
        return client_conf.client_from_conf(self.conf, PROGRAM)

    def run(self, parsed_args):
        try:
            return super().run(parsed_args)
        except domains_db.FailureDomainError as exc:
            raise Refused(for_operator(exc)) from exc


class _WriteCommand(_Command, show.ShowOne):
    """Prints the domain and what was done in Placement; exit 1 if Placement was not updated."""

    def written(self, domain: FailureDomain, outcome: failure_domains.PlacementOutcome):
        self.failed = str(outcome) if outcome.error else None
        return WRITE_COLUMNS, _row(domain) + (str(outcome),)

    def run(self, parsed_args):
        self.failed = None
        code = super().run(parsed_args)
        if self.failed:
            self.app.stderr.write(f'Placement {self.failed}\n')
            return 1
        return code


class FailureDomainCreate(_WriteCommand):
    """Create a domain at a level, with hosts of its own and/or made of smaller domains."""

    takes_domain = False

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('level', help='one of the levels the scheduler uses')
        parser.add_argument('name')
        parser.add_argument('--host', action='append', default=[], metavar='HOST',
                            help='a compute host in this domain (repeatable)')
        parser.add_argument('--contains', action='append', default=[], type=domain_ref,
                            metavar='LEVEL:NAME',
                            help='a smaller domain this one is made of: its hosts, now '
                                 'and later, are this one\'s (repeatable)')
        return parser

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        return self.written(*failure_domains.create(
            engine, self.placement(), parsed_args.level, parsed_args.name,
            hosts=parsed_args.host, contains=parsed_args.contains))


class FailureDomainAddHost(_WriteCommand):
    """Put hosts in the domain (and so in every domain made of it)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', nargs='+')
        return parser

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        return self.written(*failure_domains.add_hosts(
            engine, self.placement(), parsed_args.domain, parsed_args.host))


class FailureDomainRemoveHost(_WriteCommand):
    """Take hosts of its own out of the domain (and out of every domain made of it)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', nargs='+')
        return parser

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        return self.written(*failure_domains.remove_hosts(
            engine, self.placement(), parsed_args.domain, parsed_args.host))


class FailureDomainAddDomain(_WriteCommand):
    """Make the domain contain smaller domains too: their hosts, now and later, are its own."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('contains', nargs='+', type=domain_ref, metavar='LEVEL:NAME')
        return parser

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        return self.written(*failure_domains.add_domains(
            engine, self.placement(), parsed_args.domain, parsed_args.contains))


class FailureDomainRemoveDomain(_WriteCommand):
    """Stop the domain containing these domains: their hosts leave it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('contained', nargs='+', type=domain_ref, metavar='LEVEL:NAME')
        return parser

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        return self.written(*failure_domains.remove_domains(
            engine, self.placement(), parsed_args.domain, parsed_args.contained))


class FailureDomainDelete(_WriteCommand):
    """Delete a domain with no hosts of its own that no other domain contains; prints it as it was."""

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        domain = domains_db.check_deletable(engine, parsed_args.domain)
        try:
            outcome = failure_domains.delete(engine, self.placement(), domain.uuid)
        except failure_domains.PlacementNotUpdated as exc:
            # Nothing was deleted: the same command again is the repair.
            raise domains_db.FailureDomainError(
                f'{domain.label} not deleted: Placement not updated ({exc}); run the '
                f'command again') from exc
        return self.written(domain, outcome)


class FailureDomainList(base.SaysWhatItFound, _Command, lister.Lister):
    """List domains, smallest level first, with their hosts and what they contain."""

    takes_domain = False

    def summary(self, parsed_args, rows):
        if rows:
            return None
        level = f' of level {parsed_args.level}' if parsed_args.level else ''
        return f'no failure domains{level}'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--level', help='only the domains of this level')
        return parser

    def take_action(self, parsed_args):
        return COLUMNS, [_row(d) for d in domains_db.list_all(
            self.api_engine(parsed_args), level=parsed_args.level)]


class FailureDomainShow(_Command, show.ShowOne):
    """Show one domain."""

    def take_action(self, parsed_args):
        return COLUMNS, _row(domains_db.get(self.api_engine(parsed_args), parsed_args.domain))


class FailureDomainLevels(base.SaysWhatItFound, _Command, lister.Lister):
    """The levels the scheduler recorded, smallest first (``host`` is below them all)."""

    takes_domain = False

    def summary(self, parsed_args, rows):
        if rows:
            return None
        return ('no failure-domain levels recorded: a scheduler records its [scheduler] '
                'failure_domain_levels when it starts (or run cellplane-manage '
                'failure-domain record-levels); until then only the host level exists')

    def take_action(self, parsed_args):
        return ('position', 'level'), list(enumerate(
            failure_domain_levels.levels(self.api_engine(parsed_args)), start=1))


class FailureDomainSync(_WriteCommand):
    """Make every host's resource providers members of exactly its domains' aggregates."""

    takes_domain = False

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        try:
            outcome = failure_domains.sync(engine, self.placement())
        except failure_domains.PlacementNotUpdated as exc:
            outcome = failure_domains.PlacementOutcome(error=str(exc))
        self.failed = str(outcome) if outcome.error else None
        return ('domains', 'placement'), (len(domains_db.list_all(engine)), str(outcome))


class FailureDomainRecordLevels(_Command, lister.Lister):
    """Record this config file's ``[scheduler] failure_domain_levels`` as the levels (as a starting scheduler does)."""

    registrars = (scheduler_conf.register_opts,)
    takes_domain = False

    def take_action(self, parsed_args):
        engine = self.api_engine(parsed_args)
        domains_db.record_levels(engine, self.conf.scheduler.failure_domain_levels)
        return ('position', 'level'), list(enumerate(failure_domain_levels.levels(engine), start=1))


COMMANDS = {'failure-domain create': FailureDomainCreate,
            'failure-domain add-host': FailureDomainAddHost,
            'failure-domain remove-host': FailureDomainRemoveHost,
            'failure-domain add-domain': FailureDomainAddDomain,
            'failure-domain remove-domain': FailureDomainRemoveDomain,
            'failure-domain list': FailureDomainList,
            'failure-domain show': FailureDomainShow,
            'failure-domain delete': FailureDomainDelete,
            'failure-domain levels': FailureDomainLevels,
            'failure-domain sync': FailureDomainSync}

MANAGE_COMMANDS = {'failure-domain record-levels': FailureDomainRecordLevels}
