"""Backends by name: `open_backend(config, workers=n)` is the one way callers get one."""

from __future__ import annotations

from collections.abc import Callable

from prchain.core.registry import Registry
from prchain.scale.config import ScaleConfig
from prchain.scale.protocol import Backend

Opener = Callable[[ScaleConfig, int, dict[str, str]], Backend]
"""(config, local workers, environment to give every task) → a backend."""
BACKENDS: Registry[Opener] = Registry("execution backend")


@BACKENDS.register("local")
def _local(config: ScaleConfig, workers: int, env: dict[str, str]) -> Backend:
    from prchain.scale.local import LocalBackend

    return LocalBackend(workers)


@BACKENDS.register("ray")
def _ray(config: ScaleConfig, workers: int, env: dict[str, str]) -> Backend:
    from prchain.scale.ray_backend import RayBackend  # ray itself loads only when it is chosen

    return RayBackend(config, workers=workers, env=env)


def open_backend(
    config: ScaleConfig, *, workers: int = 1, env: dict[str, str] | None = None
) -> Backend:
    """The configured backend; `workers` sizes the local pool (and a Ray instance started here)."""
    return BACKENDS.get(config.backend)(config, workers, dict(env or {}))
