"""Measuring search quality on labelled questions (semsearch eval)."""
