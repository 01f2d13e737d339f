"""build_requests.lease_host, lease_token, leased_at: which super conductor is placing a build request.

A super conductor leases the build requests of a boot before it schedules
them; a lease whose holder died (its heartbeat stopped, or its host's
super conductor restarted with a new token) is taken over and the request
resumed (``cellplane/objects/build_requests.py``).

Revision ID: a005
Revises: a004
Create Date: 2026-11-25
"""
import sqlalchemy as sa
from alembic import op

revision = 'a005'
down_revision = 'a004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('build_requests') as batch:
        batch.add_column(sa.Column('lease_host', sa.String(255), nullable=True))
        batch.add_column(sa.Column('lease_token', sa.String(36), nullable=True))
        batch.add_column(sa.Column('leased_at', sa.DateTime, nullable=True))
