"""The nightly lifecycle without an LLM: decay and scoring, dedup, contradictions, archive."""
