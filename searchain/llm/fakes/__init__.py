"""Stand-ins for tests and benchmarks: scripted and grammar-walking LLMs, random-weight GGUFs.
Nothing in the engine imports them; only tests, ``bench`` and ``searchain models test-model`` do."""
