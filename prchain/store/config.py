"""Where the store lives."""

from pydantic import BaseModel, ConfigDict, Field


class StoreConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        "sqlite:///data/prchain.db",
        description="SQLAlchemy URL of the store; SQLite by default, PostgreSQL works too "
        "(postgresql+psycopg://user@host/db).",
    )
