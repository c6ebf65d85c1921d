"""Python shared by the loader and by PL/Python functions inside PostgreSQL.

Everything here takes its collaborators (``plpy``, caches) as arguments so that
tests/py can exercise it without a database.
"""
