"""``cellplane-manage rpc ping``: is a service answering on its bus, and how fast?

    cellplane-manage rpc ping --topic conductor --config-file cell1.conf
    cellplane-manage rpc ping --topic compute --server cell1-host1 --cell cell1 \\
        --config-file top.conf --count 5 --format json

The bus is ``[DEFAULT] transport_url`` of the config files, or with
``--cell`` that cell's transport from its cell mapping (which needs the API
database). Every daemon answers ``ping`` through its diagnostics endpoint.
"""
from __future__ import annotations

import time

from cliff import lister

from cellplane import config
from cellplane.context import new_context
from cellplane.objects import cell_mappings
from cellplane.rpc import diagnostics
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane_cli import base
from cellplane_cli.databases import engine_for

# isort: split
import oslo_messaging as messaging  # after cellplane.rpc's filter


class RpcPing(base.ConfigOptionsMixin, lister.Lister):
    """Ping a service over its message bus; one row per answer, with the round trip."""

    registrars = (rpc_options.register_opts,)

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        parser.add_argument('--topic', required=True,
                            help='conductor, scheduler or compute')
        parser.add_argument('--server', help='one host (default: any server of the topic)')
        parser.add_argument('--cell', help="use this cell's bus, from its cell mapping")
        parser.add_argument('--count', type=base.bounded(int, minimum=1), default=1,
                            help='pings to send (default 1)')
        parser.add_argument('--timeout', type=base.bounded(float, minimum=0), default=10.0,
                            help='seconds to wait for each answer (default 10)')
        return parser

    def _transport_url(self, conf, parsed_args) -> str:
        if parsed_args.cell:
            try:
                return cell_mappings.get(engine_for(conf, 'api'), parsed_args.cell).transport_url
            except cell_mappings.CellMappingError as exc:
                raise config.ConfigError(str(exc)) from exc
        if not conf.transport_url:
            raise config.ConfigError(
                f'[DEFAULT] transport_url is not set '
                f'({", ".join(config.config_files(conf)) or base.where_config_was_looked_for()}); '
                f'give the service\'s bus, or --cell with the top-level config')
        return conf.transport_url

    def take_action(self, parsed_args):
        conf = self.load_config(parsed_args)
        transport = get_transport(self._transport_url(conf, parsed_args), conf)
        rows = []
        try:
            for n in range(1, parsed_args.count + 1):
                started = time.monotonic()
                try:
                    pong = diagnostics.ping(transport, new_context(), topic=parsed_args.topic,
                                            server=parsed_args.server, message=f'ping {n}',
                                            timeout=parsed_args.timeout)
                except messaging.MessagingTimeout:
                    rows.append((n, None, None, None, f'no answer within {parsed_args.timeout} s'))
                    continue
                rows.append((n, pong.host, pong.binary,
                             round((time.monotonic() - started) * 1000, 2), 'ok'))
        finally:
            transport.cleanup()
        if all(row[-1] != 'ok' for row in rows):
            self.app.stderr.write(f'no answer from topic {parsed_args.topic!r}'
                                  f'{" server " + parsed_args.server if parsed_args.server else ""}\n')
            self._failed = True
        return ('n', 'host', 'binary', 'round_trip_ms', 'result'), rows

    def run(self, parsed_args):
        self._failed = False
        result = super().run(parsed_args)
        return 1 if self._failed else result
