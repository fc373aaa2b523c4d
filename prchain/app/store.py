"""The store as the CLI sees it: opening one, and a driver failure turned into one clear line."""

from __future__ import annotations

from sql.db import make_engine, store_error

__all__ = ["make_engine", "store_error"]
