"""Events of the GenGround and GEEK strategies, beside the shared ones of ``events.py``.

Both strategies also emit the shared events (``RoundStarted``, ``ChainGenerated``,
``NodeChecked``, ``TokenGenerated``, ``Done``), so every view of SearChain's tree keeps working;
these add what is particular to each: the grounding batches tried and GEEK's actions and votes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..result import Node

# TokenGenerated.phase values of the strategies (besides "chain", "final", "rewrite").
PHASE_DEDUCE = "deduce"  # GenGround: the next sub-question and its answer
PHASE_GROUND = "ground"  # GenGround: citing evidence from a batch and revising
PHASE_ACTION = "action"  # GEEK: the core model picking an action
PHASE_STEP = "step"  # GEEK: AddDecomp / extract / self-answer / conclude

# StrategyStep.action values.
ACTION_DEDUCE = "Deduce"
ACTION_GROUND = "Ground"
ACTION_FINAL = "FinalAnswer"
ACTION_ADD_DECOMP = "AddDecomp"
ACTION_RETRIEVE = "Retrieve"
ACTION_SELF_ANSWER = "SelfAnswer"
ACTION_BRANCH = "Branch"


@dataclass(frozen=True)
class StrategyStep:
    """One step of a strategy: ``round`` is the GenGround hop or the GEEK branch it belongs to;
    ``detail`` is plain text for a log line; ``node`` the step's node when it made one."""

    round: int
    action: str
    detail: str
    node: Node | None = None


@dataclass(frozen=True)
class VotesCounted:
    """GEEK's majority vote over its branches' answers: (answer, votes) most first, the winner,
    and whether the top count was tied (then the tie-break of ``geek.py`` decided)."""

    votes: tuple[tuple[str, int], ...]
    winner: str
    tied: bool
