"""Building an index: plan, reuse, embed, estimate; writes through store/."""
