"""Complete corpora, ready to search: the demo corpus that ships with the app, corpus files
exported on one machine and imported on another, Wikipedia downloaded (``wikipedia/``), and
corpora updated in place (passages, then the index extended). It
sits above ``corpus/`` and ``index/`` because each of these drives both: passages in, index
built or installed, one step."""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "demo": ("DEMO_NAME", "demo_questions", "ensure_demo_corpus"),
    "bundle_export": ("export_corpus",),
    "bundle_import": ("import_corpus", "CorpusExists"),
    "wikipedia.job": ("WikipediaChoice", "get_wikipedia", "plan_wikipedia"),
    "wikipedia.remote": ("LANGS as WIKIPEDIA_LANGS", "SOURCES as WIKIPEDIA_SOURCES",
                         "DEFAULT_SNAPSHOT as WIKIPEDIA_SNAPSHOTS"),
    "update": ("plan_update", "update_and_index", "UpdatePlan"),
})
