"""The index's plots as plotly figure specs, drawn in the page by plotly.js shipped in OUT_DIR.

Figures are plain plotly JSON (traces + layout) rather than `plotly.graph_objects`: the graph
objects validate and deep-copy templates on every update, which cost seconds per report, while
plotly.js does the binning and drawing in the browser from the same spec.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prchain.core.errors import MissingExtra
from prchain.report.collect import IndexData
from prchain.report.embed import script_json

PLOTLY_JS = "plotly.min.js"
EMPTY = "nothing in the store yet"
BLUE, GREEN, ORANGE = "#4c78a8", "#54a24b", "#f58518"


@dataclass
class Plot:
    id: str
    title: str
    figure_json: str


def write_plotly_js(assets: Path) -> Path:
    """Copy plotly.js out of the installed plotly package (no CDN).

    The file is located without importing plotly (its import alone takes about a second); this
    is the file `plotly.offline.get_plotlyjs()` reads."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra("plotly is not installed")
    source = Path(next(iter(spec.submodule_search_locations))) / "package_data" / PLOTLY_JS
    target = assets / PLOTLY_JS
    shutil.copyfile(source, target)
    return target


def _layout(x: str, y: str, empty: bool, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "margin": {"l": 55, "r": 10, "t": 10, "b": 45},
        "height": 260,
        "xaxis": {"title": {"text": x}, "automargin": True},
        "yaxis": {"title": {"text": y}, "automargin": True, "rangemode": "tozero"},
        "showlegend": False,
        "bargap": 0.08,
        "plot_bgcolor": "#fff",
        "paper_bgcolor": "#fff",
        "font": {"family": "system-ui, sans-serif", "size": 12},
    }
    if empty:
        layout["annotations"] = [
            {
                "text": EMPTY,
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
            }
        ]
    return layout | extra


def _histogram(values: list[float], x: str, nbins: int = 30) -> dict[str, Any]:
    trace = {"type": "histogram", "x": values, "nbinsx": nbins, "marker": {"color": BLUE}}
    return {"data": [trace], "layout": _layout(x, "count", not values)}


def _bar(
    labels: list[str], values: list[float], x: str, y: str, color: str = BLUE
) -> dict[str, Any]:
    trace = {
        "type": "bar",
        "x": labels,
        "y": values,
        "marker": {"color": color},
        "text": [f"{v:.3g}" for v in values],
        "textposition": "outside",
        "cliponaxis": False,
    }
    layout = _layout(x, y, not values)
    layout["xaxis"]["type"] = "category"
    return {"data": [trace], "layout": layout}


def _scores(data: IndexData) -> dict[str, Any]:
    rounds = sorted({r for r, _ in data.round_scores})
    traces = [
        {
            "type": "histogram",
            "name": "first submission" if r == 0 else f"refinement {r}",
            "x": [s for rr, s in data.round_scores if rr == r],
            "xbins": {"start": 0, "end": 1.0001, "size": 0.1},
        }
        for r in rounds
    ]
    layout = _layout(
        "judge score",
        "judgements",
        not rounds,
        barmode="stack",
        showlegend=bool(rounds),
        legend={"orientation": "h", "y": 1.12},
    )
    layout["xaxis"]["range"] = [0, 1.05]
    return {"data": traces, "layout": layout}


def _repos(data: IndexData) -> dict[str, Any]:
    names = [r.name for r in data.repos]
    traces = [
        {"type": "bar", "name": name, "x": names, "y": [getattr(r, name) for r in data.repos]}
        for name in ("chains", "rollouts", "kept")
    ]
    layout = _layout(
        "repository",
        "count",
        not names,
        barmode="group",
        showlegend=True,
        legend={"orientation": "h", "y": 1.12},
    )
    return {"data": traces, "layout": layout}


def index_plots(data: IndexData) -> list[Plot]:
    lengths = Counter(c.length for c in data.chains)
    if lengths:  # the paper's chains are of 2 to 5 stages: a length none has reads 0
        lengths.update(dict.fromkeys(range(2, 6), 0))
    passing = sorted(data.pass_by_stage.items())
    prm = data.prm_by_status
    figures = [
        (
            "lengths",
            "Chains by length",
            _bar(
                [str(k) for k in sorted(lengths)],
                [lengths[k] for k in sorted(lengths)],
                "stages",
                "chains",
            ),
        ),
        (
            "patch",
            "Patch size of chained PRs (lines changed)",
            _histogram([float(n) for n in data.patch_lines], "lines", 40),
        ),
        (
            "steps",
            "Agent steps per rollout",
            _histogram([r["steps"] for r in data.rollouts], "steps"),
        ),
        (
            "tokens",
            "Tokens per trajectory (final context)",
            _histogram([r["tokens"] for r in data.rollouts], "tokens"),
        ),
        ("cost", "Cost per rollout (USD)", _histogram([r["cost"] for r in data.rollouts], "USD")),
        ("scores", "Judge scores per round", _scores(data)),
        (
            "passrate",
            "Pass rate by stage index",
            _bar(
                [str(i) for i, _ in passing],
                [p / n if n else 0.0 for _, (p, n) in passing],
                "stage index",
                "passed / rolled out",
                GREEN,
            ),
        ),
        (
            "prm",
            "PRM invocations by task status",
            _bar(list(prm), list(prm.values()), "task status", "invocations", ORANGE),
        ),
        ("repos", "Per repository", _repos(data)),
    ]
    return [Plot(pid, title, script_json(figure)) for pid, title, figure in figures]
