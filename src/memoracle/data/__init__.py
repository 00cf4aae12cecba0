"""Data bundled with memoracle: the demo session."""
