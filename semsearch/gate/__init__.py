"""The no-answer gate: the off-topic bank and the threshold derived from the data."""
