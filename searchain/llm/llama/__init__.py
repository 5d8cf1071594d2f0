"""llama.cpp in-process (``llama_cpp_backend``) or in a worker process (``isolated``, ``worker``),
with what it needs: opening the model, sampling and grammars, saved KV states, prompt-lookup and
draft-model speculation, stop-text streaming. Nothing here may import numpy before llama.cpp in
the worker (issue #21): this file imports nothing."""
