"""oncotui TUI widgets/approval."""
