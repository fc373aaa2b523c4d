"""The budget reads the spend from the store. A call of this process counts from its reservation
to the moment a read of the store has seen its row, whatever order rows commit in."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.core.errors import BudgetExhausted
from prchain.llm.budget import Budget
from prchain.store.models import LLMCall

REQUEST = {"model": "m", "messages": [{"role": "user", "content": "x" * 400}]}  # ~100 tokens


def _row(engine: Engine, row_id: int, tokens: int) -> None:
    with Session(engine) as session:
        session.add(
            LLMCall(
                id=row_id,
                role="query_constructor",
                model="m",
                cache_key=f"k{row_id}",
                prompt_tokens=tokens,
                completion_tokens=0,
            )
        )
        session.commit()


def test_a_call_committed_after_a_newer_row_was_read_still_counts(engine: Engine) -> None:
    """On PostgreSQL ids are handed out at insert: worker A's row 1 may commit after worker B's
    row 2, and a read between the two sees row 2 only. Reading newer ids from then on, row 1
    would count nowhere until the next full recount."""
    budget = Budget(max_tokens=850, engine=engine)
    first = budget.reserve("m", REQUEST)  # worker A asks
    _row(engine, 2, 300)  # worker B's call lands first, with the higher id
    assert budget.spent().tokens == 300
    _row(engine, 1, 400)  # then A's
    budget.release(first, 400, 0, call_id=1)
    assert budget.spent().tokens == 700
    _row(engine, 3, 100)  # a newer row, read by id: row 1 still counts, once
    assert budget.spent().tokens == 800
    with pytest.raises(BudgetExhausted, match="spent"):
        budget.reserve("m", REQUEST)  # 800 spent and about 110 more asked: past 850


def test_a_released_call_read_before_its_release_counts_once(engine: Engine) -> None:
    budget = Budget(max_tokens=10_000, engine=engine)
    held = budget.reserve("m", REQUEST)
    _row(engine, 1, 400)
    assert budget.spent().tokens == 400  # another worker's check read the row already
    budget.release(held, 400, 0, call_id=1)
    assert budget.spent().tokens == 400
