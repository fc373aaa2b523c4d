"""Acceptance (issue 54), as a new user tries it: the geo chain mined, its era set up and its tests
verified; exported with --runnable; its images saved, removed from the engine and loaded again;
then `tasks eval` on the file alone, and one flat row run by a runner written here from the
documented mapping only (docs/export-formats.md, "Runnable rows").

Every image this module builds is of the made-up repository REPO (its tags carry REPO's slug and
its `prchain.repo` label), named afresh for each run, so removing them touches nothing another
test, another run on the same engine or a user relies on.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import ChainRepo
from prchain.environments.eras.build import cache_volume
from prchain.environments.eras.config import ErasConfig
from prchain.export.swe_rebench import check_row
from tests.support.era_runs import gold_rollout
from tests.support.llm_fixtures import FAKE_API_KEY, make_test_llm_config
from tests.support.mini_stage import mini_swe_agent_on

pytestmark = [pytest.mark.docker, pytest.mark.slow]
# This run's namespace: every image it makes carries its slug. A name of the run's own, since
# the module removes what it built by this name (two runs on one engine removed each other's).
REPO = f"runnable-test-{uuid.uuid4().hex[:8]}/geo"
WRONG = ("3.14159 * radius * radius", "3 * radius * radius")  # circle_area, wrongly


@dataclass
class Exported:
    tasks: Path
    flat: Path
    common: list[str]
    export_output: str
    save_output: str
    archive: Path
    rollout: list[tuple[int, bool | None, Any]]  # T(p̂) of a gold rollout, stage by stage


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _ok(*args: str) -> str:
    result = _invoke(*args)
    assert result.exit_code == 0, f"prchain {' '.join(args)} failed:\n{result.output}"
    return result.output


def _own_images(client: Any) -> list[str]:
    return [tag for image in client.images({"prchain.repo": REPO}) for tag in image["tags"]]


@pytest.fixture(scope="module")
def exported(
    geo_repo: ChainRepo,
    docker_client: Any,
    base_image: str,
    tmp_path_factory: Any,
    _fake_llm_server: ScriptedLLMServer,
) -> Iterator[Exported]:
    """Mined, set up, verified, rolled out with the gold patches (while the era image that a
    rollout opens its sandbox on is there), exported, saved, removed and loaded again (once per
    module)."""
    work = tmp_path_factory.mktemp("runnable")
    config = work / "prchain.yaml"
    eras = {"suites": {"bookworm": "3.11"}, "extra_base_packages": [], "test_packages": []}
    eras |= {"seed_packages": [], "system_site_packages": True}  # the demo's offline eras
    config.write_text(
        yaml.safe_dump(
            {
                "eras": eras,
                "environment": {"log_dir": str(work / "logs")},
                "chains": {"min_chain_code_lines": 0},
                "env_setup": {"enabled": False},
            }
        )
    )
    common = ["--config", str(config), "--db", f"sqlite:///{work / 'store.db'}"]
    try:
        _ok("mine", "--source", "git", "--name", REPO, str(geo_repo.path), *common)
        _ok("chains", "build", *common)
        _ok("env", "setup", *common)
        _ok("tests", "verify", *common)
        rollout = _gold_rollout(common, _fake_llm_server)
        tasks = work / "tasks.jsonl"
        export_output = _ok("tasks", "export", str(tasks), "--runnable", *common)
        archive = work / "images.tar.gz"
        save_output = _ok("tasks", "images", "save", str(tasks), str(archive))
        for tag in sorted(_own_images(docker_client), key=lambda t: "/era-" in t):
            docker_client.remove_image(tag)  # the stage image first, then the era image under it
        assert _own_images(docker_client) == []
        _ok("tasks", "images", "load", str(archive), "--tasks", str(tasks))
        flat = work / "tasks.stages.jsonl"
        yield Exported(tasks, flat, common, export_output, save_output, archive, rollout)
    finally:
        for tag in _own_images(docker_client):
            docker_client.remove_image(tag)
        docker_client.remove_volume(cache_volume(ErasConfig(), REPO))  # its builds' download cache


def _gold_rollout(
    common: list[str], server: ScriptedLLMServer
) -> list[tuple[int, bool | None, Any]]:
    """tests/support/era_runs.py's gold rollout, with the session's scripted LLM server (this
    module's fixture outlives the per-test `fake_llm`)."""
    server.reset()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_BASE_URL", server.base_url)
            patch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
            url = common[common.index("--db") + 1]
            return gold_rollout(common, url, make_test_llm_config(), server)
    finally:
        server.reset()


def _chain(exported: Exported) -> dict[str, Any]:
    return json.loads(exported.tasks.read_text().splitlines()[0])


def _predictions(path: Path, patches: dict[str, str]) -> Path:
    rows = [
        {"instance_id": iid, "model_patch": patch, "model_name_or_path": "tester"}
        for iid, patch in patches.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _eval(exported: Exported, preds: Path, results: Path) -> str:
    tasks = str(exported.tasks)
    return _ok("tasks", "eval", tasks, "--predictions", str(preds), "--results", str(results), *exported.common)  # fmt: skip


def _results(path: Path) -> dict[int, dict[str, Any]]:
    return {row["idx"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_the_export_says_what_runs_where_and_what_does_not(exported: Exported) -> None:
    assert "2 runnable stages" in exported.export_output
    assert "not runnable, tests unusable: 1" in exported.export_output  # #3's gold fails its test
    stages = _chain(exported)["stages"]
    env = [s["environment"] for s in stages]
    assert [e["runnable"] for e in env] == [True, True, False]
    assert env[2]["reason"].startswith("the gold patch fails 1 of its own tests")
    assert env[0]["image"] == env[1]["image"] and env[0]["image_id"].startswith("sha256:")
    assert env[0]["log_parser"] == "pytest" and env[0]["recipe"]["status"] == "verified"
    assert "1 image:" in exported.save_output and exported.archive.stat().st_size > 1_000_000
    flat = [json.loads(line) for line in exported.flat.read_text().splitlines()]
    assert [r["instance_id"] for r in flat] == [s["instance_id"] for s in stages[:2]]


def test_every_verified_stage_s_gold_resolves_on_the_loaded_images(
    exported: Exported, tmp_path: Path
) -> None:
    results = tmp_path / "gold.jsonl"
    out = _ok("tasks", "eval", str(exported.tasks), "--results", str(results), *exported.common)
    assert "2 of 2 stages resolved; 1 of 1 chain resolved throughout" in out
    found = _results(results)
    assert {i: (r["status"], r["fail_to_pass"], r["pass_to_pass"]) for i, r in found.items()} == {
        1: ("resolved", [2, 2], [1, 1]),
        2: ("resolved", [1, 1], [3, 3]),
    }
    assert [r["output"] for r in found.values()] == ["", ""]
    again = _ok("tasks", "eval", str(exported.tasks), "--results", str(results), *exported.common)
    assert again.count("(stored)") == 2 and len(results.read_text().splitlines()) == 2


def test_every_verified_stage_s_gold_passes_a_rollouts_clean_room(exported: Exported) -> None:
    """Gold before attack, Python room: the rollout's sealed clean room passes the real change of
    each verified stage, the second on the first's carried patch; #3's tests are unusable, so it
    has no verdict (the judge alone decides it)."""
    assert exported.rollout == [(1, True, []), (2, True, []), (3, None, None)], exported.rollout


def test_a_gold_patch_that_fails_exits_1(exported: Exported, tmp_path: Path) -> None:
    chain = _chain(exported)
    chain["stages"][0]["patch"] = chain["stages"][0]["patch"].replace(*WRONG)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(chain) + "\n")
    result = _invoke("tasks", "eval", str(broken), *exported.common)
    assert result.exit_code == 1, result.output
    found = _results(tmp_path / "broken.gold.eval.jsonl")
    assert found[1]["status"] == "unresolved" and found[1]["fail_to_pass"] == [0, 2]


def test_a_wrong_prediction_does_not_resolve(exported: Exported, tmp_path: Path) -> None:
    first = _chain(exported)["stages"][0]
    wrong = {first["instance_id"]: first["patch"].replace(*WRONG)}
    preds = _predictions(tmp_path / "wrong.jsonl", wrong)
    out = _eval(exported, preds, tmp_path / "wrong.eval.jsonl")
    assert "0 of 1 stage resolved" in out  # a model failing is a finding, not a failed command
    found = _results(tmp_path / "wrong.eval.jsonl")
    assert found[1]["status"] == "unresolved" and found[1]["model"] == "tester"
    assert sorted(found[1]["failing"]) == sorted(first["FAIL_TO_PASS"])
    output = found[1]["output"]  # what the run printed, kept for the reader
    assert all(test.rsplit("::", 1)[-1] in output for test in first["FAIL_TO_PASS"]), output


def test_stage_two_is_scored_on_stage_one_s_carried_prediction(
    exported: Exported, tmp_path: Path
) -> None:
    one, two = _chain(exported)["stages"][:2]
    alone = _predictions(tmp_path / "alone.jsonl", {two["instance_id"]: two["patch"]})
    _eval(exported, alone, tmp_path / "alone.eval.jsonl")
    found = _results(tmp_path / "alone.eval.jsonl")
    assert found[1]["status"] == "no prediction"
    assert found[2]["status"] == "unresolved" and "does not apply" in found[2]["reason"]
    both = {one["instance_id"]: one["patch"], two["instance_id"]: two["patch"]}
    carried = _predictions(tmp_path / "both.jsonl", both)
    _eval(exported, carried, tmp_path / "both.eval.jsonl")
    found = _results(tmp_path / "both.eval.jsonl")
    assert [found[i]["status"] for i in (1, 2)] == ["resolved", "resolved"]


# ---- an independent runner of the flat form, from docs/export-formats.md only --------------------


def _docker(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], input=stdin, capture_output=True, text=True)


def _passing(output: str) -> set[str]:
    """log_parser "pytest": `PASSED <id>` (or XFAIL, XPASS) lines of the short test summary."""
    words = ("PASSED ", "XFAIL ", "XPASS ")
    return {line.split(" ", 1)[1].strip() for line in output.splitlines() if line.startswith(words)}


def run_row(row: dict[str, Any], patch: str) -> bool:
    """Resolved: install, patch, setup_cmd, test_patch, test_cmd; every F2P and P2P test passes."""
    config, name = row["install_config"], f"runnable-test-{uuid.uuid4().hex[:8]}"
    started = _docker("run", "-d", "--network", "none", "--name", name, row["image_name"], "sleep", "infinity")  # fmt: skip
    assert started.returncode == 0, started.stderr
    try:
        for command in config["install"]:
            done = _docker("exec", "-w", "/", name, "bash", "-c", command)
            assert done.returncode == 0, done.stderr
        here = ("exec", "-i", "-w", config["workdir"], name, "bash", "-c")
        if _docker(*here, "git apply -", stdin=patch).returncode != 0:
            return False
        if config["setup_cmd"]:
            _docker(*here, config["setup_cmd"])
        assert _docker(*here, "git apply -", stdin=row["test_patch"]).returncode == 0
        assert config["log_parser"] == "pytest"
        passing = _passing(_docker(*here, config["test_cmd"]).stdout)
        return all(t in passing for t in [*row["FAIL_TO_PASS"], *row["PASS_TO_PASS"]])
    finally:
        _docker("rm", "-f", name)


def test_a_flat_row_gets_the_same_verdict_from_an_independent_runner(
    exported: Exported, tmp_path: Path
) -> None:
    row = json.loads(exported.flat.read_text().splitlines()[0])
    assert (row["image_name"], row["image_digest"]) == (
        _chain(exported)["stages"][0]["environment"]["image"],
        _docker("image", "inspect", "-f", "{{.Id}}", row["image_name"]).stdout.strip(),
    )
    wrong = row["patch"].replace(*WRONG)
    preds = _predictions(tmp_path / "wrong.jsonl", {row["instance_id"]: wrong})
    _eval(exported, preds, tmp_path / "wrong.eval.jsonl")
    ours = _results(tmp_path / "wrong.eval.jsonl")[1]["status"] == "resolved"
    assert (run_row(row, row["patch"]), run_row(row, wrong)) == (True, ours)
    assert ours is False


# ---- mini-swe-agent driving a stage by image_name (its own DockerEnvironment, a scripted model) ----


def _call(command: str) -> list[dict[str, Any]]:
    return [{"name": "bash", "arguments": {"command": command}}]


def test_mini_swe_agent_drives_a_stage_by_image_name(
    exported: Exported, fake_llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    """A scripted model in mini-swe-agent writes the stage's change (the gold code patch) in the
    row's image, submits `git diff`; `tasks eval --predictions` scores that patch resolved."""
    row = json.loads(exported.flat.read_text().splitlines()[0])
    fake_llm.push(
        model="policy", contains="<pr_description>", tool_calls=_call("git status --short")
    )
    edit = "git apply <<'PATCH'\n" + row["patch"].rstrip("\n") + "\nPATCH"
    fake_llm.push(model="policy", tool_calls=_call(edit))
    fake_llm.push(
        model="policy", tool_calls=_call("git diff > /tmp/patch.txt && wc -l /tmp/patch.txt")
    )
    fake_llm.push(
        model="policy",
        tool_calls=_call("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat /tmp/patch.txt"),
    )
    info = mini_swe_agent_on(row, fake_llm.base_url)
    assert info["exit_status"] == "Submitted" and fake_llm.pending() == []
    assert "+++ b/" in info["submission"] and row["test_patch"] not in info["submission"]
    preds = tmp_path / "mini.jsonl"
    prediction = {"instance_id": row["instance_id"], "model_patch": info["submission"]}
    preds.write_text(json.dumps({**prediction, "model_name_or_path": "mini-swe-agent"}) + "\n")
    out = _eval(exported, preds, tmp_path / "mini.eval.jsonl")
    assert "1 of 1 stage resolved" in out, out
    found = _results(tmp_path / "mini.eval.jsonl")
    assert (found[1]["status"], found[1]["model"]) == ("resolved", "mini-swe-agent")


# ---- through a registry: a local one, built from Debian's docker-registry package ---------------

REGISTRY_DOCKERFILE = """\
FROM {base}
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends docker-registry \\
    && rm -rf /var/lib/apt/lists/* && mkdir -p /var/lib/docker-registry \\
    && printf 'version: 0.1\\nstorage:\\n  filesystem:\\n    rootdirectory: /var/lib/docker-registry\\nhttp:\\n  addr: :5000\\n' > /etc/docker/registry/config.yml
CMD ["/usr/bin/docker-registry", "serve", "/etc/docker/registry/config.yml"]
"""


def _wait_until_it_answers(url: str) -> None:
    for _ in range(100):
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as answer:
            if answer.status == 200:
                return
        time.sleep(0.3)
    raise AssertionError(f"the registry at {url} never answered")


@pytest.fixture(scope="module")
def registry(base_image: str, tmp_path_factory: Any) -> Iterator[str]:
    """A registry on 127.0.0.1 in a container of this module's own (no registry image can be
    pulled here; Debian's archive has the registry)."""
    context = tmp_path_factory.mktemp("registry")
    (context / "Dockerfile").write_text(REGISTRY_DOCKERFILE.format(base=base_image))
    image, name = "runnable-test/registry:debian", f"runnable-test-registry-{uuid.uuid4().hex[:8]}"
    built = _docker("build", "-q", "-t", image, str(context))
    if built.returncode != 0:
        pytest.skip(f"no registry image could be built (Debian's archive?): {built.stderr[-300:]}")
    try:
        started = _docker("run", "-d", "--name", name, "-p", "127.0.0.1::5000", image)
        assert started.returncode == 0, started.stderr
        port = _docker("port", name, "5000").stdout.splitlines()[0].rsplit(":", 1)[1]
        _wait_until_it_answers(f"http://127.0.0.1:{port}/v2/")
        yield f"127.0.0.1:{port}/runnable-test"
    finally:
        _docker("rm", "-f", name)
        _docker("rmi", image)


def test_images_travel_through_a_registry_too(
    exported: Exported, registry: str, docker_client: Any
) -> None:
    env = _chain(exported)["stages"][0]["environment"]
    out = _ok("tasks", "images", "push", str(exported.tasks), registry)
    assert f"pushed {registry}/{env['image']} sha256:" in out
    assert (
        docker_client.remove_image(env["image"]) and docker_client.image_info(env["image"]) is None
    )
    _ok("tasks", "images", "pull", str(exported.tasks), registry)
    assert docker_client.image_info(env["image"]).id == env["image_id"]  # the same content
    assert _own_images(docker_client) == [env["image"]]  # and no registry tag left behind


# ---- SWE-rebench V2 rows (`tasks convert --to swe-rebench-v2`) --------------------------------


def test_swe_rebench_v2_leaves_out_ids_its_parsers_split_and_its_images_hold_b_t(
    exported: Exported, geo_repo: ChainRepo, tmp_path: Path
) -> None:
    """The geo chain's required tests include `test_circle_area[unit - r]`, which every pytest
    parser of SWE-rebench V2 splits at its spaces (its own runner scored the gold patch of stage 1
    unresolved for it): both runnable stages are counted, not written. With that id left out of
    the lists (a file made here), each row's instance image holds B_t as one commit and no
    mirror of the future."""
    out = tmp_path / "rows"
    said = _ok("tasks", "convert", str(exported.tasks), str(out), "--to", "swe-rebench-v2", *exported.common)  # fmt: skip
    assert "wrote 0 rows under" in said and "not written: 2 stages: a required test's id" in said
    assert json.loads((out / "tasks.json").read_text()) == []

    chain = _chain(exported)
    for stage in chain["stages"]:
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            stage[key] = [t for t in stage[key] if " " not in t]
    edited = tmp_path / "edited.jsonl"
    edited.write_text(json.dumps(chain) + "\n")
    out = tmp_path / "edited-rows"
    said = _ok("tasks", "convert", str(edited), str(out), "--to", "swe-rebench-v2", *exported.common)  # fmt: skip
    rows = json.loads((out / "tasks.json").read_text())
    try:
        assert "wrote 2 rows under" in said
        assert [r["instance_id"] for r in rows] == [s["instance_id"] for s in chain["stages"][:2]]
        assert rows[1]["meta"]["prchain"]["carried_from"] == [chain["stages"][0]["instance_id"]]
        for row, stage in zip(rows, chain["stages"], strict=False):
            check_row(row)
            seen = _docker(
                "run", "--rm", "--network", "none", "-w", "/geo", row["image_name"], "bash", "-c",
                "git rev-list --count HEAD; git rev-parse 'HEAD^{tree}'; git status --porcelain | wc -l;"
                " ls /opt/prchain/origin.git 2>/dev/null | wc -l",
            )  # fmt: skip
            tree = subprocess.run(
                ["git", "-C", str(geo_repo.path), "rev-parse", f"{stage['base_commit']}^{{tree}}"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            assert seen.stdout.split() == ["1", tree, "0", "0"], seen.stdout + seen.stderr
    finally:
        for row in rows:
            _docker("rmi", row["image_name"])
