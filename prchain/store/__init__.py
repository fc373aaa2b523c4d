"""The store: SQLAlchemy models, engine/session helpers and the generated schema.sql."""
