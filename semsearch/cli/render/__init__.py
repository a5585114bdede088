"""Terminal output for people, and --json for scripts."""
