"""An index in Qdrant (``qdrant://`` locations): the same index as a folder holds, kept as the
points of a collection behind an alias (see ``store`` for the layout, ``client`` for connecting)."""
