"""Answering a question: top-k, filters, hybrid ranking, snippets, the answer."""
