"""``cellplane-manage service list``: every service of the top level and of every cell, up or down.

Top-level services (schedulers, super conductors) heartbeat into the API
database; a cell's conductor and compute agents into that cell's database.
A service is up when its last heartbeat is younger than ``[service]
service_down_time``. The cells are read at the same time, each bounded by
``[cells] read_timeout``: a cell that cannot be read gets one row saying so
and why, and the others are listed all the same.
"""
from __future__ import annotations

import sqlalchemy as sa
from cliff import lister

from cellplane.cells.databases import CellDatabases
from cellplane.cells.scatter_gather import CellTimeout, gather
from cellplane.objects import services
from cellplane_api import conf as api_conf
from cellplane_cli import base
from cellplane_cli.databases import engine_for

TOP_LEVEL = '(top)'
COLUMNS = ('cell', 'binary', 'host', 'status', 'last_seen_at', 'disabled',
           'disabled_reason', 'version')


def _rows(cell: str, found: list[dict], service_down_time: float) -> list[tuple]:
    return [(cell, r['binary'], r['host'],
             'up' if services.is_up(r, service_down_time=service_down_time) else 'down',
             r['last_seen_at'].isoformat(sep=' ', timespec='seconds')
             if r['last_seen_at'] else None,
             bool(r['disabled']), r['disabled_reason'], r['version'])
            for r in found]


class ServiceList(base.ConfigOptionsMixin, lister.Lister):
    """List every service of the top level and of every cell, with its last heartbeat."""

    registrars = (api_conf.register_opts,)

    def get_parser(self, prog_name):
        return self.add_config_arguments(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        conf = self.load_config(parsed_args)
        down_time = conf.service.service_down_time
        api_engine = engine_for(conf, 'api')
        cells = CellDatabases(api_engine)
        try:
            rows = _rows(TOP_LEVEL, services.list_all(api_engine), down_time)
            mappings = {m.uuid: m for m in cells.reload()}
            answers = gather({uuid: (lambda u=uuid: services.list_all(cells.engine(u)))
                              for uuid in mappings}, conf.cells.read_timeout)
            for uuid, mapping in sorted(mappings.items(), key=lambda kv: kv[1].name):
                answer = answers[uuid]
                if isinstance(answer, (sa.exc.SQLAlchemyError, CellTimeout)):
                    reason = (str(answer).splitlines() or [''])[0]
                    rows.append((mapping.name, None, None,
                                 f'unknown: the cell database cannot be read '
                                 f'({type(answer).__name__}: {reason})',
                                 None, None, None, None))
                elif isinstance(answer, BaseException):
                    raise answer
                else:
                    rows.extend(_rows(mapping.name, answer, down_time))
        finally:
            cells.dispose()
            api_engine.dispose()
        return COLUMNS, rows
