"""LLM writers: the query constructor and the link vetter, with their prompts and text handling."""
