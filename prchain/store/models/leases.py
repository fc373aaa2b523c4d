"""Work leases: which process is doing one unit of work right now (see prchain/store/leases.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class WorkLease(Base):
    """One row per claimed unit of work, refreshed while it runs.

    A row is won by a conditional INSERT/UPDATE that only one writer can win; a holder whose
    heartbeat is older than the configured timeout has died, and the next claim takes over.
    """

    __tablename__ = "work_leases"

    kind: Mapped[str] = mapped_column(
        String(40), primary_key=True
    )  # prchain.store.leases.LeaseKind
    key: Mapped[str] = mapped_column(String(200), primary_key=True)  # e.g. a chain id
    owner: Mapped[str] = mapped_column(String(200))  # host:pid:uuid.start (prchain/store/leases.py)
    heartbeat_at: Mapped[datetime] = mapped_column(default=utcnow)
    acquired_at: Mapped[datetime] = mapped_column(default=utcnow)
