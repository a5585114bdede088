"""A language model's context from a search: prompt and expansion."""
