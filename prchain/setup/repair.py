"""The setup agent as the last rung of `env setup`'s ladder (memory → planner → agent).

`agent_repair` returns the `AgentRepair` callable prchain.setup.ladder calls when neither
recipe memory nor the planner verified an era. The agent works in a build sandbox that is the era
build's container with checkpoints: the same suite base, uv, CA bundle, cache volume, variables and
the tree at the same place. What it finds is handed back as a plan (its kept steps, then the same
closing steps a planner recipe ends with) for the era build to rebuild and verify like any other.
"""

from __future__ import annotations

from pathlib import Path

from prchain.environments.buildbox import BoxSettings
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import DockerClient
from prchain.environments.egress import EgressProxy
from prchain.environments.eras import python
from prchain.environments.eras.build import (
    base_config,
    build_environment,
    egress,
    ensure_toolchain_image,
)
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.images import ensure_base_image
from prchain.llm.protocol import ChatLLM
from prchain.setup.agent import AgentRecipe, SetupRequest, run_setup_agent
from prchain.setup.config import SetupAgentConfig
from prchain.setup.ladder import AgentRepair, Candidate, RepairRequest

FAILURE_CHARS = 6000  # of the planner's log shown with its root error


def agent_repair(
    llm: ChatLLM,
    env: EnvironmentConfig,
    eras: ErasConfig,
    config: SetupAgentConfig,
    *,
    client: DockerClient | None = None,
) -> AgentRepair:
    """The ladder's agent rung, bound to one LLM client and configuration."""

    def repair(request: RepairRequest) -> Candidate | None:
        docker = client or DockerClient()
        suite = request.plan.suite if request.plan else next(iter(eras.suites))
        base = ensure_base_image(docker, base_config(env, eras, suite), lambda _m: None)
        if request.plan is not None and request.plan.toolchain:  # the agent starts from it
            base, _, _ = ensure_toolchain_image(
                docker, env, eras, request.repo, base, request.plan, lambda _m: None
            )
            if not base:
                return None
        binds, variables = build_environment(env, eras, request.repo)
        with egress(eras) as proxy:
            found = run_setup_agent(
                llm,
                docker,
                SetupRequest(
                    repo=request.repo,
                    clone=Path(request.clone),
                    sha=request.sha,
                    base_image=base,
                    commands=list(request.plan.commands) if request.plan else [],
                    test_command=request.plan.test_command if request.plan else "",
                    failure=_failure(request),
                    ecosystem=request.plan.ecosystem if request.plan else "python",
                ),
                config,
                box_settings(eras, binds, variables, proxy),
            )
        if not found.ok:
            return None
        return Candidate("agent", _plan(request, suite, found), cost=found.cost_usd)

    return repair


def box_settings(
    eras: ErasConfig,
    binds: dict[str, tuple[str, str]],
    variables: dict[str, str],
    proxy: EgressProxy | None,
) -> BoxSettings:
    """The setup box: the build's mounts and variables, and no network but the proxy's."""
    egress = proxy.directory if proxy is not None else ""
    return BoxSettings(python.PROJECT_SRC, binds, variables, eras.network_mode, egress)


def _failure(request: RepairRequest) -> str:
    tail = request.log[-FAILURE_CHARS:]
    return f"{request.failure}\n\n---- the planner's log (its end) ----\n{tail}"


def _plan(request: RepairRequest, suite: str, found: AgentRecipe) -> Plan:
    """The agent's steps as a plan; it ends as a planner recipe ends (project out, .pth, wrappers)."""
    previous = request.plan
    notes = [
        f"setup agent: {found.replies} replies, {len(found.commands)} steps kept, "
        f"{found.rolled_back} rolled back, ${found.cost_usd:.4f}, {found.seconds:.0f} s"
    ]
    ecosystem = previous.ecosystem if previous else "python"
    # A Python recipe ends as the planner's do (the project out of the venv, .pth, wrappers).
    finish = python.finish_commands(request.snapshot) if ecosystem == "python" else []
    return Plan(
        ecosystem,
        suite,
        previous.interpreter if previous else eras_interpreter(suite),
        previous.cutoff if previous else "",
        [*found.commands, *finish],
        found.test_command,
        previous.setup_command if previous else "",
        notes,
        variant="agent",
        toolchain=list(previous.toolchain) if previous else [],
        env=dict(previous.env) if previous else {},
    )


def eras_interpreter(suite: str) -> str:
    return ErasConfig().suites.get(suite, "")
