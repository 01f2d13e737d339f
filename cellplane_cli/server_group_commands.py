"""``cellplane server group ...``: policies among instances at a failure-domain level.

    cellplane server group create NAME --policy POLICY [--level LEVEL] [--max-per-domain N]
    cellplane server group list [--project P]
    cellplane server group show GROUP      (its members and the domain of each)
    cellplane server group delete GROUP    (its members leave it and keep running)

POLICY is affinity, anti-affinity, soft-affinity or soft-anti-affinity;
LEVEL is ``host`` (the default) or a level the scheduler recorded
(``cellplane failure-domain levels``). GROUP is an id, or a name in
``--project``. Every command prints a table, or JSON with ``--format json``.
"""
from __future__ import annotations

from cliff import command, lister, show

from cellplane.objects import server_groups
from cellplane_api import server_groups as group_views
from cellplane_cli import base
from cellplane_cli.server_commands import STRUCTURED_FORMATS, _TopLevelCommand
from rpc_schemas.request_spec import HOST_LEVEL, POLICIES

COLUMNS = ('id', 'name', 'project', 'policy', 'level', 'max_per_domain', 'members')
SHOW_COLUMNS = COLUMNS[:-1] + ('members',)


def _row(group: server_groups.ServerGroup, members) -> tuple:
    return (group.uuid, group.name, group.project_id, group.policy, group.level,
            group.max_per_domain if group.anti else None, members)


class _GroupCommand(_TopLevelCommand):
    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--project', default=None,
                            help='the owning project (create: default "default"; '
                                 'others: find names in it)')
        return parser


class ServerGroupCreate(_GroupCommand, show.ShowOne):
    """Create a server group with a policy at a level."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name')
        parser.add_argument('--policy', required=True, choices=POLICIES)
        parser.add_argument('--level', default=HOST_LEVEL,
                            help='host (default) or a failure-domain level the '
                                 'scheduler uses (rack, row ...)')
        parser.add_argument('--max-per-domain', type=base.bounded(int, minimum=1), metavar='N',
                            help='anti-affinity: members one domain may hold (default 1)')
        parser.add_argument('--user', default=None, help='the creating user')
        return parser

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, _cells):
            try:
                group = group_views.create(
                    engine, project_id=parsed_args.project or 'default',
                    user_id=parsed_args.user, name=parsed_args.name,
                    policy=parsed_args.policy, level=parsed_args.level,
                    max_per_domain=parsed_args.max_per_domain,
                    quota=self.quotas(conf, engine))
            except server_groups.MaxPerDomainError as exc:
                raise server_groups.ServerGroupError(
                    f'--max-per-domain {exc.problem}') from None
        return COLUMNS, _row(group, [])


class ServerGroupList(base.SaysWhatItFound, _GroupCommand, lister.Lister):
    """List server groups with how many members each has."""

    nothing = 'no server groups'

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (_, engine, _cells):
            groups = server_groups.list_all(engine, project_id=parsed_args.project)
        return COLUMNS, [_row(g, len(g.members)) for g in groups]


class _OneGroupCommand(_GroupCommand):
    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('group', metavar='GROUP', help='server group id or name')
        return parser


class ServerGroupShow(_OneGroupCommand, show.ShowOne):
    """Show a server group: each member, its status, host and domain at the group's level."""

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (conf, engine, cells):
            group = server_groups.get(engine, parsed_args.group,
                                      project_id=parsed_args.project)
            views = group_views.member_views(engine, cells, group,
                                             cell_timeout=conf.cells.read_timeout)
        members = [{'id': v.uuid, 'name': v.name, 'status': v.status, 'host': v.host,
                    group.level: v.domain} for v in views]
        if parsed_args.formatter not in STRUCTURED_FORMATS:
            # A table cell shows text: one member per line.
            members = '\n'.join(
                f'{m["id"]} {m["name"] or "-"} {m["status"]} {m["host"] or "-"} '
                f'{group.level}={m[group.level] or "-"}' for m in members)
        return SHOW_COLUMNS, _row(group, members)


class ServerGroupDelete(_OneGroupCommand, command.Command):
    """Delete a server group; its members leave it and keep running, as in Nova."""

    def take_action(self, parsed_args):
        with self.api(parsed_args) as (_, engine, _cells):
            group = server_groups.delete(engine, parsed_args.group,
                                         project_id=parsed_args.project)
        left = (f'; its {len(group.members)} member(s) left it' if group.members
                else ' (it had no members)')
        self.app.stdout.write(f'{group.uuid}: deleted{left}\n')
        return 0


COMMANDS = {'server group create': ServerGroupCreate, 'server group list': ServerGroupList,
            'server group show': ServerGroupShow, 'server group delete': ServerGroupDelete}
