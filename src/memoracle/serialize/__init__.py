"""JSON shapes: `records` for the engine's values, `reports` for what jobs and doors
report. Every `--json` output and MCP result is built by one of them (docs/json.md)."""
