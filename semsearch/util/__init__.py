"""Small helpers every stage may use (no semsearch imports but errors)."""
