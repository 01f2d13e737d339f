"""``cellplane-manage placement audit [--fix]``: allocations that no live instance explains, and the reverse.

Reads the API database, every cell database and Placement
(``[placement]`` of the config file, as the top-level services reach it);
one Placement request per resource provider, with a progress bar on a
terminal. See ``conductor/super/placement_audit.py`` for what counts as live.
"""
from __future__ import annotations

from cliff import lister
from tqdm import tqdm

from cellplane.cells.databases import CellDatabases
from cellplane_cli import base
from cellplane_cli.databases import engine_for
from conductor.super import placement_audit
from placement import client_conf

COLUMNS = ('kind', 'consumer', 'reason', 'cell', 'held', 'fixed')


class PlacementAudit(base.SaysWhatItFound, base.ConfigOptionsMixin, lister.Lister):
    """List allocations no live instance holds, and ACTIVE instances holding none; --fix repairs them."""

    registrars = (client_conf.register_opts,)

    def get_parser(self, prog_name):
        parser = self.add_config_arguments(super().get_parser(prog_name))
        parser.add_argument('--fix', action='store_true',
                            help='remove the leaked allocations and claim the missing ones')
        parser.add_argument('--grace', type=base.bounded(float, minimum=0), default=300.0,
                            metavar='SECONDS',
                            help='leave alone what changed less than this long ago '
                                 '(default 300)')
        return parser

    def summary(self, parsed_args, rows):
        kinds = [row[0] for row in rows]
        leaked, missing = (kinds.count(placement_audit.LEAKED),
                           kinds.count(placement_audit.MISSING))
        fixed = sum(1 for row in rows if row[-1])
        return (f'{base.count(leaked, "orphaned allocation")}, {missing} missing, '
                f'{fixed} fixed ({base.count(self._providers, "provider")} read)')

    def take_action(self, parsed_args):
        self._providers = 0
        conf = self.load_config(parsed_args)
        placement = client_conf.client_from_conf(conf, 'cellplane-manage placement audit')
        api_engine = engine_for(conf, 'api')
        cells = CellDatabases(api_engine)
        try:
            with tqdm(desc='providers read', unit='provider', file=self.app.stderr,
                      disable=None) as bar:
                def progress(done: int, total: int) -> None:
                    self._providers = total
                    bar.total = total
                    bar.update(done - bar.n)
                findings = placement_audit.audit(
                    api_engine, cells, placement, grace=parsed_args.grace,
                    fix=parsed_args.fix, progress=progress)
        finally:
            cells.dispose()
            api_engine.dispose()
        return COLUMNS, [
            (f.kind, f.consumer, f.reason, f.cell,
             ', '.join(f'{rp}: ' + ','.join(f'{rc}={n}' for rc, n in sorted(r.items()))
                       for rp, r in sorted(f.held.items())), f.fixed)
            for f in findings]
