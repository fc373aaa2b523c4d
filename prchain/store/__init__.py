"""The store: models, migrations, sessions, and `Store` (`prchain.store.handle`), the one object a
command opens (`prchain.store.opener`, the composition layer's alone) and hands down. Nothing is
imported here, so reading the store's config section loads no SQLAlchemy."""
