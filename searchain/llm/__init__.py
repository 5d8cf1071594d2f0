"""LLM runtime: one interface (``searchain.llm.base.LLM``) over llama.cpp and OpenAI-compatible servers."""
