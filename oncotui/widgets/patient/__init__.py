"""oncotui TUI widgets/patient."""
