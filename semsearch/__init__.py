"""semsearch: semantic search over folders of Markdown, offline."""

__version__ = "0.1.0"
