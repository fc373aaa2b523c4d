"""Export formats: what prchain writes for trainers and for other harnesses, in one registry.

`registry.py` is the table of every format (name, kind, version tag, converter, checker, dataset-card
section); the CLI's `--format` and `--to` choices are read off it. Formats whose code needs nothing
above the verdicts layer live here (`swe_rebench.py`); the others stay beside what they convert
(docs/add-an-export-format.md).
"""
