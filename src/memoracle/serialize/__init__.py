"""JSON shapes of the engine's values (`records`): memory, hit, recall block, entity, ….
The doors and the nightly exports build them here; what jobs and doors report is
`memoracle.reports`, a floor above (docs/architecture.md, docs/json.md)."""
