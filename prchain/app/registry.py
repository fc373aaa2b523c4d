"""Era images through the registry the user names (`scale.registry`): pushed once by the node that
`env setup` built them on, pulled by any node that lacks one instead of built again. The store's
recipe names the image (its tag is a hash of the recipe), so the registry is a cache of the store,
never a source of recipes: an image it lacks is built as without it."""

from __future__ import annotations

from collections.abc import Callable

Present = Callable[[str], bool]


def fetch(registry: str | None, tag: str) -> bool:
    """Whether the engine has `tag`, after pulling it from `registry` where it lacked it."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.transfer import pull

    client = DockerClient()
    if client.image_id(tag) is not None:
        return True
    return bool(registry) and not pull(client, [tag], str(registry))


def publish(registry: str, tag: str) -> str:
    """Push `tag` to `registry` (a layer it holds already is not sent again); the digest."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.transfer import push

    return push(DockerClient(), [tag], registry)[tag]


def present_on(registry: str | None) -> Present:
    """`fetch` for one registry: is the image here, pulled if need be."""
    return lambda tag: fetch(registry, tag)
