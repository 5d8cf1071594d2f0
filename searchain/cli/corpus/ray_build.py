"""``searchain corpus index NAME --ray auto|HOST:PORT``: the embedding stage on a Ray cluster.

Kept beside ``corpus`` so that plain builds never import it; see ``searchain.index.build.ray_embed``.
"""

from __future__ import annotations

import sys

from ...errors import SearchainError
from ..confirm import confirm


def index_on_ray(ctx, args, build) -> int:
    """Build ``args.name``'s index with Ray embedding it (``build`` is the command's own build
    function). A cluster that does not answer is reported; at a terminal the local build is
    offered instead."""
    from ...corpus.manager import CorpusManager

    CorpusManager(ctx.paths, ctx.settings).open_store(args.name).close()  # unknown: fail before Ray
    on_ray = connect(ctx, args)
    if on_ray is None:
        return build(ctx, args.name, rebuild=args.rebuild, assume_yes=args.yes)
    with on_ray:
        return build(ctx, args.name, rebuild=args.rebuild, embed_missing=on_ray)


def connect(ctx, args):
    """The Ray strategy, connected, with its plan printed; None when the user took the local build
    instead of a cluster that does not answer. Raises when Ray is missing or the user declines."""
    from ...index.build.ray_embed import RayEmbedding, RayOptions, RayUnavailable, ray_temp_dir

    if args.ray_workers is not None and args.ray_workers < 1:
        raise SearchainError(f"--ray-workers must be at least 1, got {args.ray_workers}.")
    device = ctx.settings.retrieval.embed_device  # auto: GPU workers when the cluster has GPUs
    on_ray = RayEmbedding(RayOptions(address=args.ray, workers=args.ray_workers, device=device),
                          temp_dir=ray_temp_dir(ctx.paths), corpus_name=args.name)
    try:
        on_ray.connect()
    except RayUnavailable as exc:
        if not sys.stdin.isatty():
            raise
        print(f"error: {exc.message}", file=sys.stderr)
        if confirm("Build on this machine instead?", False):
            return None
        raise SearchainError("Not built.", hint=exc.hint) from exc
    try:
        plan = on_ray.plan()  # checks the worker count before any model is loaded
    except BaseException:
        on_ray.close()
        raise
    print(f"embedding on {plan.describe()}", file=sys.stderr)
    return on_ray
