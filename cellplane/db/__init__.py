"""Database plumbing shared by every cellplane database (API, cell, placement).

``engines`` builds SQLAlchemy engines that behave the same on SQLite and
PostgreSQL; ``migrate`` runs each database's own Alembic history.
"""
