"""Updating a corpus in place: a folder corpus re-synced with its folders (#34), a corpus from
one source brought to a newer snapshot of it (#33). Only what changed is re-read, re-chunked and
stored anew; unchanged documents keep their passages, ids and so their vectors. The index is
extended afterwards by the usual incremental build (``searchain.library.update`` joins the two).

- ``apply``: the shared step, replacing documents batch by batch (``DocumentUpdater``);
- ``folders``: the folder re-sync (size, time, then content hash) and its stat-only ``scan``;
- ``snapshot``: the update from a newer source;
- ``job``: which of the two a corpus gets, under its lock, recorded in its meta;
- ``plan``: what an update will read, said before it starts;
- ``report``: ``UpdateReport``, counted in files or articles.
"""

from ...faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "job": ("update_corpus", "last_update"),
    "plan": ("plan_read", "ReadPlan"),
    "report": ("UpdateReport",),
})
