"""Prompts are data: one Jinja template per role, rendered with strict undefined variables."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template


@cache
def _environment(directory: str) -> Environment:
    return Environment(
        loader=FileSystemLoader(directory),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def load_template(directory: Path, name: str) -> Template:
    """A template from a package's `prompts/` directory; a missing variable raises at render time."""
    return _environment(str(directory)).get_template(name)


def render(directory: Path, name: str, **variables: object) -> str:
    return load_template(directory, name).render(**variables).strip() + "\n"
