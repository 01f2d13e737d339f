"""Column sets more than one cellplane table declares the same way, and the time their DateTime columns hold."""
from __future__ import annotations

import datetime

import sqlalchemy as sa


def naive_utc(moment: datetime.datetime) -> datetime.datetime:
    """Naive UTC, as the API and cell databases' DateTime columns store times."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment


def utcnow() -> datetime.datetime:
    """Now, in naive UTC."""
    return naive_utc(datetime.datetime.now(datetime.timezone.utc))


def timestamps() -> list[sa.Column]:
    """created_at and updated_at, both set by the database."""
    return [
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now(),
                  onupdate=sa.func.now()),
    ]


def services_table(metadata: sa.MetaData) -> sa.Table:
    """The liveness record of services: in the API DB for top-level services,
    in each cell DB for that cell's services."""
    return sa.Table(
        'services', metadata,
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('binary', sa.String(255), nullable=False),
        sa.Column('topic', sa.String(255), nullable=True),
        sa.Column('report_count', sa.Integer, nullable=False, server_default='0'),
        sa.Column('last_seen_at', sa.DateTime, nullable=True),
        sa.Column('disabled', sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column('disabled_reason', sa.String(255), nullable=True),
        sa.Column('version', sa.String(32), nullable=True),
        # The compute API's service id from microversion 2.53 (set when the row is created).
        sa.Column('uuid', sa.String(36), nullable=True),
        # An operator's word that the service is down whatever its heartbeats say
        # (Nova's force-down: fencing before evacuating a host).
        sa.Column('forced_down', sa.Boolean, nullable=False, server_default=sa.false()),
        sa.UniqueConstraint('host', 'binary', name='uniq_services0host0binary'),
        sa.UniqueConstraint('uuid', name='uniq_services0uuid'),
        *timestamps(),
    )
