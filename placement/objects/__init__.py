"""Database logic of each Placement resource (SQLAlchemy Core, no ORM).

Functions take an open ``Connection`` (see placement/db/api.py) so a
handler composes several of them in one transaction.
"""
