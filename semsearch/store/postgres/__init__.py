"""An index in a PostgreSQL schema (``postgresql://`` locations), searched inside the server with
pgvector: see ``store`` for the store itself, ``layout`` for the tables, ``writer`` for a build,
``reader`` for the parts a search reads on demand, ``queries`` for what runs in the database and
``connection`` for connecting. psycopg and pgvector are imported here alone (the ``postgres``
extra)."""
