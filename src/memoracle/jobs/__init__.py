"""Jobs: work that runs over an engine as a whole — the nightly run and its steps,
health and its doctor, canaries, charts, pointer checks, checkpoints, export/import,
scheduling, and the LoCoMo benchmark harness."""
