"""Evaluation: the benchmark files in ``../shared/eval`` (``datasets``), the runner that answers
and scores them (cover-EM and token F1 come from ``searchain.metrics``), several modes side by
side (``compare``), sampling error (``stats``) and where a wrong answer went wrong (``diagnose``)."""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "datasets": ("load_dataset", "EvalDataset", "EvalQuestion", "SHARED_EVAL_DIR"),
    "runner": ("run_eval", "EvalReport"),
})
