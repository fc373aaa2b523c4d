"""Product base images no test can overwrite: the eras base's name carries its package set, and a
prchain/ name is used only when the image under it has this config's recipe label."""

from __future__ import annotations

import io
import secrets
import tarfile
from typing import Any

import pytest

from prchain.environments.config import EnvironmentConfig
from prchain.environments.eras.build import base_config
from prchain.environments.eras.config import ErasConfig
from prchain.environments.images import base_recipe, ensure_base_image


def test_an_eras_base_without_the_compiler_never_takes_the_products_name() -> None:
    env = EnvironmentConfig()
    product = base_config(env, ErasConfig(), "bookworm")
    bare = base_config(env, ErasConfig(extra_base_packages=[]), "bookworm")
    assert product.base_image.startswith("prchain/base:bookworm-eras-")
    assert bare.base_image != product.base_image
    assert base_config(env, ErasConfig(), "bookworm").base_image == product.base_image
    assert base_config(env, ErasConfig(), "trixie").base_image != product.base_image
    assert base_recipe(bare) != base_recipe(product)


@pytest.mark.docker
def test_an_image_of_another_recipe_under_a_prchain_name_is_not_taken(
    docker_client: Any, base_image: str
) -> None:
    """A made-up image (no recipe label) tagged with a prchain/base: name of this test's own: the
    product's base of the same recipe takes the name back instead (no debootstrap: it exists)."""
    name = f"prchain/base:py51-test-{secrets.token_hex(4)}"
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        info = tarfile.TarInfo("empty")
        archive.addfile(info, io.BytesIO(b""))
    foreign = docker_client.import_tar(iter([data.getvalue()]), name, {"prchain.test": "py51"})
    era = f"prchain/era-py51-test-{secrets.token_hex(4)}:x"
    docker_client.tag(foreign, era)
    try:
        # A sandbox on an era image names it as its base: that name is the era image's own.
        assert ensure_base_image(docker_client, EnvironmentConfig(base_image=era)) == foreign
        config = EnvironmentConfig(base_image=name)
        assert ensure_base_image(docker_client, config, notify=print) == base_image != foreign
        assert docker_client.image_id(name) == base_image
        assert ensure_base_image(docker_client, config, notify=print) == base_image  # kept now
    finally:
        docker_client.remove_image(era)
        docker_client.remove_image(name)
        docker_client.remove_image(foreign)
