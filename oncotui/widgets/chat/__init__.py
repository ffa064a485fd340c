"""oncotui TUI widgets/chat."""
