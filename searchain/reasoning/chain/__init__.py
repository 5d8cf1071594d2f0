"""The Chain-of-Query as text: prompts, the GBNF grammar that forces its format, and the parser
that reads it back as models really write it."""
