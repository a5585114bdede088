"""The index on disk: its folder, format, meta.json, journal and readers."""
