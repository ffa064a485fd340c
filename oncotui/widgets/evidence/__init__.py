"""oncotui TUI widgets/evidence."""
