"""SearChain reasoning: Chain-of-Query prompts and parsing, the IR loop, tracing, baselines."""
