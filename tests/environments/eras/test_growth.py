"""Which locked packages an era builds again on an earlier era's image (growth.py), read from real
Cargo.lock formats: version 3 with checksums, and version 1, whose dependencies name their source
and whose checksums are not per package."""

from __future__ import annotations

from prchain.environments.eras.growth import rebuilt, refusal
from prchain.environments.eras.rust import lock_units

REGISTRY = "registry+https://github.com/rust-lang/crates.io-index"
V1 = f"""[[package]]
name = "app"
version = "0.1.0"
dependencies = [
 "serde 1.0.100 ({REGISTRY})",
 "itoa 0.4.8 ({REGISTRY})",
]

[[package]]
name = "itoa"
version = "0.4.8"
source = "{REGISTRY}"

[[package]]
name = "itoa"
version = "1.0.1"
source = "{REGISTRY}"

[[package]]
name = "serde"
version = "1.0.100"
source = "{REGISTRY}"
dependencies = [
 "itoa 1.0.1 ({REGISTRY})",
]

[metadata]
"checksum itoa 0.4.8 ({REGISTRY})" = "{"a" * 64}"
"""


def test_a_version_1_lock_resolves_each_dependency_to_the_version_it_names() -> None:
    units = dict((name, built_on) for name, _, built_on in lock_units(V1))
    assert units == {
        f"itoa 0.4.8 {REGISTRY}": (),
        f"itoa 1.0.1 {REGISTRY}": (),
        f"serde 1.0.100 {REGISTRY}": (f"itoa 1.0.1 {REGISTRY}",),  # not 0.4.8
    }


def test_a_changed_package_rebuilds_what_is_built_on_it_and_nothing_else() -> None:
    earlier = lock_units(V1)
    newer_itoa = V1.replace('version = "1.0.1"', 'version = "1.0.2"').replace(
        "itoa 1.0.1", "itoa 1.0.2"
    )
    later = lock_units(newer_itoa)
    assert rebuilt(earlier, later) == 2  # itoa 1.0.2 is new; serde is built on it; itoa 0.4.8 stays
    assert rebuilt(earlier, earlier) == 0
    assert refusal(earlier, later).startswith("2 of its 3 locked packages")
    assert refusal(earlier, earlier) == ""


def test_a_lock_that_does_not_parse_leaves_growth_unjudged() -> None:
    assert lock_units("[[package]\nname = ") == ()
    assert lock_units("") == ()
    assert lock_units('[[package]]\nname = "a"\nsource = "x"\n') == ()  # no version
    assert refusal((), lock_units(V1)) == ""
