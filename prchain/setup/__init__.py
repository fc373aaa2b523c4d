"""Environment setup, `prchain env setup`, in one package: the ladder that builds and verifies each
era's environment (`ladder`: the deterministic plan, its revisions, the recipe memory's reuse) and
the LLM setup agent (role `env_setup`: `agent`, `repair`) that it calls only where the planner's
recipe failed, working in a build sandbox with checkpoints.

Below it: the eras' rooms and their recipe memory (`prchain.environments.eras`, which verdicts
read too); above it: the wiring to the store and the command (`prchain.app.envsetup`,
`prchain.cli.env`)."""
