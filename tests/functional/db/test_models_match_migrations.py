"""The Core table definitions the code uses agree with what the migrations create."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from cellplane.db import engines, migrate
from cellplane.db.api import models as api_models
from cellplane.db.cell import models as cell_models

MODELS = {'api': api_models.metadata, 'cell': cell_models.metadata}


@pytest.mark.parametrize('database', sorted(MODELS))
def test_migrated_schema_matches_models(database, tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/{database}.sqlite')
    migrate.sync(database, engine)
    inspector = sa.inspect(engine)
    migrated = {t: sorted(c['name'] for c in inspector.get_columns(t))
                for t in inspector.get_table_names()
                if t != f'cellplane_{database}_version'}
    declared = {t.name: sorted(c.name for c in t.columns)
                for t in MODELS[database].sorted_tables}
    assert migrated == declared
