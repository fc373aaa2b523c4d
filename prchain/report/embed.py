"""JSON embedded in a page inside <script type="application/json">."""

from __future__ import annotations

import json
from typing import Any


def script_json(value: Any) -> str:
    """JSON that cannot end its <script> element early: every '</' is written '<\\/'."""
    return json.dumps(value, ensure_ascii=False, default=str).replace("</", "<\\/")
