"""OpenClaw's side: what a workspace is and where an agent's transcript lives, the
configuration snippets to paste, and install/uninstall into a workspace."""
