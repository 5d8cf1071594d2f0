"""SearChain's own loop (Algorithm 1): ``run`` (``ReasoningRun``: the Chain-of-Query planned,
each step checked by IR, feedback, the Tree-of-Reasoning), ``stepwise`` (a chain written a step
at a time, IR's answer written in) and ``draft_rules`` (when a first answer is drafted).
GenGround and GEEK are in ``strategies/``; what every strategy shares is at the top."""
