"""Wiring for `prchain p2t …`: process graphs per stage (reverse phase) and curated chains (forward
phase), each in the configured sandbox, recorded as a rollout with source p2t so the export takes
it. The modules split it by job; the CLI reaches P2T's own library only through them."""
