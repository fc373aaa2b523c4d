"""Era-pinned environments: one image per (repository, era key), planned from the stage's base.

An era is what a stage's environment depends on, read from its base commit B_t: the dependency
manifests and the date. `manifests` reads them, an ecosystem (`ecosystems`, Python in `python`)
turns them into an era key and a plan, `build` turns a plan into an image, `memory` keeps the
recipes. See docs/environments.md.
"""
