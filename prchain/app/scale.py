"""Picking the execution backend for a run and checking the store can be shared by its workers."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy.engine import make_url

from prchain.app.config import Config
from prchain.core.errors import StoreNotShared
from prchain.scale.backends import open_backend
from prchain.scale.protocol import Backend

Notify = Callable[[str], None]


def task_env(config: Config) -> dict[str, str]:
    """What every task needs from the driver's environment: the LLM server, its key, GitHub tokens."""
    names = {
        config.llm.base_url_env,
        config.llm.api_key_env,
        config.miner.github.token_env,
        *config.scale.forward_env,
    }
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}


def portable(config: Config) -> Config:
    """The config as a task elsewhere must see it: a relative SQLite path made absolute."""
    url = make_url(config.store.url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return config
    absolute = url.set(database=str(Path(url.database).resolve()))
    store = config.store.model_copy(update={"url": absolute.render_as_string(hide_password=False)})
    return config.model_copy(update={"store": store})


def check_store(url: str, backend: Backend, notify: Notify) -> None:
    """A SQLite file works only when every worker is on this machine; say which case this is."""
    if make_url(url).get_backend_name() != "sqlite" or backend.name == "local":
        return
    if not backend.single_machine():
        raise StoreNotShared(
            f"the {backend.name} cluster has workers on other machines, and they cannot write to "
            "a SQLite file on this one"
        )
    notify(
        f"store is a SQLite file: allowed because every {backend.name} node runs on this machine "
        "(a cluster across machines needs PostgreSQL)"
    )


@contextmanager
def backend_for(
    config: Config, *, workers: int, notify: Notify = print, sandboxes: bool = False
) -> Iterator[Backend]:
    """The configured backend, with the store checked; a Ray instance started here stops after.

    With `sandboxes` (its work opens containers), Ctrl-C and SIGTERM first remove every container
    this process started: the handlers that do it can only be set here, in the main thread, not
    in the worker threads that open the sandboxes. Removing them is also what stops a worker
    blocked in a long command, which Ctrl-C alone never reaches."""
    if sandboxes:
        from prchain.environments.cleanup import install_handlers  # the docker SDK loads only here

        install_handlers()
    with open_backend(config.scale, workers=workers, env=task_env(config)) as backend:
        check_store(config.store.url, backend, notify)
        yield backend
