"""The agent loop, its tools, the judge, rollouts and trajectory export."""
