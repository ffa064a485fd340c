"""oncotui TUI widgets."""
