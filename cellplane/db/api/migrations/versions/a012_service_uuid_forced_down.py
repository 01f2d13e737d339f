"""services.uuid and services.forced_down of the top-level services, as the cell databases have them (c006).

Rows that exist get a fresh UUID each. ``forced_down`` is false for all:
a service is down when an operator forces it or its heartbeats stop
(``cellplane/objects/services.py``, ``Liveness``).

Revision ID: a012
Revises: a011
Create Date: 2026-11-26
"""
import uuid

import sqlalchemy as sa
from alembic import op

revision = 'a012'
down_revision = 'a011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('services') as batch:
        batch.add_column(sa.Column('uuid', sa.String(36), nullable=True))
        batch.add_column(sa.Column('forced_down', sa.Boolean, nullable=False,
                                   server_default=sa.false()))
    services = sa.table('services', sa.column('id', sa.Integer),
                        sa.column('uuid', sa.String))
    conn = op.get_bind()
    for (row_id,) in conn.execute(sa.select(services.c.id)).all():
        conn.execute(services.update().where(services.c.id == row_id)
                     .values(uuid=str(uuid.uuid4())))
    with op.batch_alter_table('services') as batch:
        batch.create_unique_constraint('uniq_services0uuid', ['uuid'])


def downgrade() -> None:
    with op.batch_alter_table('services') as batch:
        batch.drop_constraint('uniq_services0uuid', type_='unique')
        batch.drop_column('forced_down')
        batch.drop_column('uuid')
