"""``searchain bench scale``: the whole retrieval stack at Wikipedia scale, step by step."""
