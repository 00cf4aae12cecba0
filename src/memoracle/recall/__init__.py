"""Retrieval: hybrid search and the budgeted recall block."""
