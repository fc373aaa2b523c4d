"""The link rules: what a build decides about each candidate link and each PR, from the evidence."""
