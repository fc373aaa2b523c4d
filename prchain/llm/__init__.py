"""The one thin layer over any OpenAI-compatible server, shared by every LLM role."""
