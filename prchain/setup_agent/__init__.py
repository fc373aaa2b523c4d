"""The LLM setup agent (role `env_setup`): called only where the deterministic planner's recipe
failed; it works in a build sandbox with checkpoints and returns a recipe to verify."""
