"""Files the agent reads, rendered from the store: MEMORY.md's block, daily notes, exports."""
