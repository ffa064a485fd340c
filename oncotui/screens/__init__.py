"""oncotui TUI screens."""
