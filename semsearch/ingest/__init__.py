"""Stage 1, reading a docs folder: files, Markdown, front matter, chunks, token counts."""
