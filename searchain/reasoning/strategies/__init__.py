"""Answering strategies beside SearChain's loop: GenGround and GEEK, with their prompts, grammars,
parsing, events and plain-text view."""
