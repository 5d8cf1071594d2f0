"""A model served by an OpenAI-compatible server (LM Studio, Ollama, llama.cpp's server): the
wire format, the backend, and the probe that says what a server offers."""
