"""memoracle: local-first long-term memory for LLM agents."""
