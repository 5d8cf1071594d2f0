"""Building a corpus's index: the cost plan said first, embedding checkpoints, the index stage, Ray."""
