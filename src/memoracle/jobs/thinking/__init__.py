"""The nightly model steps (docs/llm.md): extract, arbitrate, consolidate, reflect, run
by the nightly `model` step when `llm.provider` is set, each vetted, gated, tagged and
reversible (`engine.thinking`). `files` (the pending queue, the quarantine, the state)
is read by `health` and loads nothing of the model path."""
