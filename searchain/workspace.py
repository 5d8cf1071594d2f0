"""The facade the CLI and the desktop app use: one object that owns the loaded parts.

A ``Workspace`` holds the paths and settings and lazily loads, on first use, the corpus manager,
retrievers (one per corpus), the shared embedder, the LLM, the reader and the conversation store.
Every loader is guarded by its own lock so that two threads asking for the same part load it once,
and a slow LLM load never blocks, say, listing saved conversations. Other subsystems are imported
inside the methods so that creating a Workspace is instant and needs none of the heavy libraries.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from .config import AppPaths, Settings
from .errors import ModelError
from .events import CancelToken, EventCallback, check, emit


class Workspace:
    """Lazily loaded, thread-safe access to everything one user session needs."""

    def __init__(self, paths: AppPaths, settings: Settings):
        self.paths = paths
        self.settings = settings
        self._corpora: Any = None
        self._retrievers: dict[str, Any] = {}
        self._keyword_only: dict[str, list[str]] = {}  # per cached retriever: corpora not indexed yet
        self._embedder: Any = None
        self._second_embedder: Any = None
        self._llm: Any = None
        self._llm_warnings_shown = 0  # how many of the loaded model's warnings answers reported
        # Bumped by ``replace_llm``; the loaded model and reader note the one they were made for.
        self._llm_generation = 0
        self._llm_made_for = 0
        self._reader: Any = None
        self._reader_made_for = 0
        self._conversations: Any = None
        self._corpora_lock = threading.Lock()
        self._retriever_lock = threading.Lock()
        self._embedder_lock = threading.Lock()
        self._llm_lock = threading.Lock()
        self._reader_lock = threading.Lock()
        self._store_lock = threading.Lock()

    # -- corpora and retrieval -------------------------------------------------------------

    @property
    def corpora(self):
        """The ``CorpusManager`` for ``paths.corpora_dir``."""
        with self._corpora_lock:
            if self._corpora is None:
                from .corpus.manager import CorpusManager

                self._corpora = CorpusManager(self.paths, self.settings)
            return self._corpora

    def retriever(self, corpus: str | Sequence[str] | None = None, *, on_event: EventCallback | None = None,
                  cancel: CancelToken | None = None):
        """The retriever for ``corpus`` (default: the active corpus), opened once and cached.

        Several corpora (``"wiki,papers"`` or a list, e.g. a chat's ``chat_corpora``) give one
        retriever over all of them (``index/mixed.py``); a missing one is a ``CorpusError``
        naming it. The demo corpus is built on first use (``on_event``/``cancel`` follow that
        build), so a fresh install can answer questions at once. Opening a vector index is
        announced on ``on_event`` (``layout.OPEN_STAGE``): a Wikipedia-sized one takes ~20 s.
        A corpus whose vector index is not built yet is searched by keywords, and each call says
        so on ``on_event`` (``KeywordOnly``); once its index is finished the next call opens the
        hybrid retriever in its place.
        """
        from .index.mixed import parse_corpora
        from .index.retrievers import KeywordOnly, keyword_only

        names = tuple(parse_corpora(corpus or self.settings.active_corpus))
        key = names[0] if len(names) == 1 else ",".join(names)
        with self._retriever_lock:
            waiting = keyword_only(self.paths, self.settings, [n for n in names if n != "demo"])
            if key in self._retrievers and self._keyword_only.get(key) != waiting:
                self._retrievers.pop(key)  # an index finished (or was removed) since it opened
            if key not in self._retrievers:
                lexical_only = self.settings.retrieval.retriever.strip().lower() == "bm25"
                if "demo" in names:
                    from .library.demo import ensure_demo_corpus

                    ensure_demo_corpus(self.paths, self.settings, on_event=on_event, cancel=cancel,
                                       index=not lexical_only,
                                       embedder=None if lexical_only else self.embedder(),
                                       second_embedder=None if lexical_only else self.second_embedder())
                from .index.retrievers import finish_keyword_indexes, open_retriever

                finish_keyword_indexes(self.paths, self.settings, names, on_event=on_event, cancel=cancel)
                embedder = None if lexical_only else self.embedder()
                second = None if lexical_only else self.second_embedder()
                if not lexical_only:
                    from .events import Progress
                    from .index.layout import OPEN_STAGE, opening_note

                    for name in names:
                        # a missing one is named by open_retriever
                        if self.corpora.exists(name) and name not in waiting:
                            emit(on_event, Progress(OPEN_STAGE, 0, 0,
                                                    opening_note(self.corpora.corpus_dir(name), name)))
                self._retrievers[key] = open_retriever(self.paths, self.settings, list(names),
                                                       embedder=embedder, second_embedder=second)
                self._keyword_only[key] = waiting
            for name in waiting:  # said at every question, as long as it lasts
                emit(on_event, KeywordOnly(name))
            return self._retrievers[key]

    def forget_retriever(self, corpus: str | None = None) -> None:
        """Drop cached retrievers (all, or those searching ``corpus``, alone or mixed), e.g.
        after a corpus was rebuilt."""
        with self._retriever_lock:
            if corpus is None:
                self._retrievers.clear()
            else:
                for key in [k for k in self._retrievers if corpus in k.split(",")]:
                    self._retrievers.pop(key, None)

    def chat_corpora(self, conversation_id: int | None) -> list[str]:
        """The corpora a chat searches: those chosen for it (``ConversationStore.set_corpora``),
        else the active corpus. Chosen corpora that were removed since stay in the list: asking
        then fails with a ``CorpusError`` naming them, and the chat still opens."""
        if conversation_id is not None:
            chosen = self.conversations().corpora(conversation_id)
            if chosen:
                return chosen
        return [self.settings.active_corpus]

    def embedder(self):
        """The one sentence embedder shared by retrieval and duplicate-query detection."""
        with self._embedder_lock:
            if self._embedder is None:
                from .index.embed.embedder import Embedder

                self._embedder = Embedder.for_settings(self.settings.retrieval,
                                                       models_dir=self.paths.models_dir)
            return self._embedder

    def second_embedder(self):
        """The second embedding model (``retrieval.second_embedder``, ``auto`` resolved), shared
        by every corpus's retriever; None when off."""
        from .index.embed.second import second_embedder_name

        name = second_embedder_name(self.settings.retrieval, self.paths.models_dir)
        if not name:
            return None
        with self._embedder_lock:
            if self._second_embedder is None or self._second_embedder.name != name:
                from .index.embed.embedder import Embedder

                self._second_embedder = Embedder.for_settings(self.settings.retrieval, name,
                                                              models_dir=self.paths.models_dir)
            return self._second_embedder

    # -- models ----------------------------------------------------------------------------

    def llm(self, on_event: EventCallback | None = None):
        """The LLM named by ``settings.llm``, loaded on first call (``on_event`` gets progress)."""
        with self._llm_lock:
            if self._llm is not None and self._llm_made_for != self._llm_generation:
                # Replaced in the settings: closed here, on the worker that needs the model
                # (a call still in flight on it is waited for, never on the UI thread).
                old, self._llm = self._llm, None
                self._llm_warnings_shown = 0
                old.close()
            if self._llm is None:
                self._llm_made_for = self._llm_generation
                llm_settings = self.settings.llm
                resolved = self.resolved_model()
                if llm_settings.backend == "llama_cpp" and not resolved.path:
                    raise ModelError(
                        "No language model is configured.",
                        hint="Download one with `searchain models pull ...`, or pass "
                        "`--model PATH` with a GGUF file (in the app: Settings > Model catalogue, "
                        "or File > Open GGUF file).",
                    )
                if resolved.starter:  # the installed starter stands in; settings stay unset
                    from dataclasses import replace

                    llm_settings = replace(llm_settings, model_path=resolved.path)
                from .llm.loader import load_llm  # validates the file and says what is wrong

                self._llm = load_llm(llm_settings, on_event=on_event)
            return self._llm

    def resolved_model(self):
        """The GGUF the next ``llm()`` loads: the chosen one, else the installed starter model
        (``ResolvedModel.starter`` says which; ``path`` is "" when there is neither)."""
        from .llm.models.starter import resolve_model

        return resolve_model(self.settings.llm, self.paths.models_dir)

    def replace_llm(self) -> None:
        """The settings name another model (or reader): the next ``llm()`` and ``reader()``
        close what is loaded and load afresh, on whichever thread asks first. Returns at once,
        so the UI thread may call it while a worker is still using the old model."""
        self._llm_generation += 1

    def unload_llm(self) -> None:
        """Close and forget the LLM (frees its memory); the next ``llm()`` loads it again."""
        with self._llm_lock:
            llm, self._llm = self._llm, None
            self._llm_warnings_shown = 0
        with self._reader_lock:
            # An LLM-backed reader holds the old model: rebuild it next time.
            self._reader = None
        if llm is not None:
            llm.close()

    def reader(self):
        """The reader chosen by ``settings.reasoning.reader`` (auto | dpr | llm)."""
        with self._reader_lock:
            if self._reader is None or self._reader_made_for != self._llm_generation:
                from .reader.loader import load_reader

                self._reader_made_for = self._llm_generation

                llm = None
                if self.settings.reasoning.reader in ("llm", "auto"):
                    # The LLM reader needs the model; "auto" may fall back to it.
                    try:
                        llm = self.llm()
                    except ModelError:
                        if self.settings.reasoning.reader == "llm":
                            raise
                self._reader = load_reader(self.paths, self.settings, llm=llm)
            return self._reader

    # -- corpus jobs (each runs on the caller's thread; the app calls them from its workers) ----

    def index_status(self, corpus: str):
        """The state of ``corpus``'s index for a listing (``index.status.listing_status``)."""
        from .index.status import listing_status

        return listing_status(self.paths, self.settings, corpus)

    def plan_index_build(self, corpus: str, *, rebuild: bool = False, on_event: EventCallback | None = None,
                         cancel: CancelToken | None = None):
        """What building ``corpus``'s index will cost on this machine, said before it starts."""
        from .index.build.plan import plan_build

        return plan_build(self.paths, self.settings, corpus, rebuild=rebuild, on_event=on_event, cancel=cancel)

    def build_index(self, corpus: str, *, rebuild: bool = False, on_event: EventCallback | None = None,
                    cancel: CancelToken | None = None):
        """Bring ``corpus``'s index up to date (resumable; ``index.build.builder.build_index``)."""
        from .index.build.builder import build_index

        return build_index(self.paths, self.settings, corpus, rebuild=rebuild, on_event=on_event, cancel=cancel)

    def plan_corpus_update(self, corpus: str, source=None, *, on_event: EventCallback | None = None,
                           cancel: CancelToken | None = None):
        """What updating ``corpus`` will cost, said before it starts (``library.update``)."""
        from .library.update import plan_update

        return plan_update(self.paths, self.settings, corpus, source, on_event=on_event, cancel=cancel)

    def update_corpus(self, corpus: str, source=None, *, on_event: EventCallback | None = None,
                      cancel: CancelToken | None = None):
        """Re-sync ``corpus``'s folders (or update it from a newer ``source``) and extend its
        index; the ``UpdateReport`` says what changed (``library.update``)."""
        from .library.update import update_and_index

        report = update_and_index(self.paths, self.settings, corpus, source, on_event=on_event,
                                  cancel=cancel)
        self.forget_retriever(corpus)  # its index changed
        return report

    def export_corpus(self, corpus: str, out, *, overwrite: bool = False, on_event: EventCallback | None = None,
                      cancel: CancelToken | None = None):
        """Write ``corpus`` with its indexes to one shareable file (``library.bundle_export``)."""
        from .library.bundle_export import export_corpus

        return export_corpus(self.paths, self.settings, corpus, out, overwrite=overwrite, on_event=on_event,
                             cancel=cancel)

    def import_corpus(self, file, *, as_name: str | None = None, on_event: EventCallback | None = None,
                      cancel: CancelToken | None = None):
        """Check and install a corpus file (``library.bundle_import``)."""
        from .library.bundle_import import import_corpus

        return import_corpus(self.paths, self.settings, file, as_name=as_name, on_event=on_event, cancel=cancel)

    # -- conversations -----------------------------------------------------------------------

    def conversations(self):
        """The ``ConversationStore`` at ``paths.conversations_db``."""
        with self._store_lock:
            if self._conversations is None:
                from .store.conversations import ConversationStore

                self._conversations = ConversationStore.open(self.paths.conversations_db)
            return self._conversations

    # -- answering ---------------------------------------------------------------------------

    def engine(self, *, mode: str | None = None, corpus: str | Sequence[str] | None = None,
               on_event: EventCallback | None = None, cancel: CancelToken | None = None):
        """A ``SearChainEngine`` wired to this workspace's parts.

        Modes without IR ("direct", "coq") do not open a retriever or load a reader. ``on_event``
        hears of slow first steps (opening a large index, finishing a keyword index a stopped
        ingest left), which ``cancel`` stops.
        """
        from .llm.base import GenerationParams
        from .reasoning.engine import SearChainEngine
        from .reasoning.modes import needs_ir

        reasoning, llm = self.settings.reasoning, self.settings.llm
        mode = mode or reasoning.mode
        with_ir = needs_ir(mode)
        return SearChainEngine(
            self.llm(),
            self.retriever(corpus, on_event=on_event, cancel=cancel) if with_ir else None,
            self.reader() if mode == "searchain" else None,
            settings=reasoning,
            embedder=_LazyEmbedder(self.embedder) if with_ir else None,
            use_grammar=self.settings.llm.use_grammar,
            generation=GenerationParams(max_tokens=llm.max_tokens, temperature=llm.temperature, seed=llm.seed),
        )

    def answer(
        self,
        question: str,
        *,
        mode: str | None = None,
        corpus: str | Sequence[str] | None = None,
        task: str | None = None,
        history: Sequence[Any] = (),
        on_event: EventCallback | None = None,
        cancel: CancelToken | None = None,
    ):
        """Answer ``question``; returns an ``AnswerResult`` (raises ``Cancelled`` if cancelled).

        ``history``: earlier ``PriorTurn``s of the conversation, oldest first (follow-ups).
        ``corpus``: one name, ``"a,b"`` or a list (a chat's ``chat_corpora``); None = active.
        """
        engine = self.engine(mode=mode, corpus=corpus, on_event=on_event, cancel=cancel)
        self._report_model_warnings(on_event)
        return engine.answer(question, mode=mode, task=task, history=history, on_event=on_event,
                             cancel=cancel)

    def warm_up(self, *, mode: str | None = None, corpus: str | Sequence[str] | None = None,
                on_event: EventCallback | None = None, cancel: CancelToken | None = None):
        """Make the first question as fast as the next: load the model, open the active corpus's
        retriever (``corpus``: as in ``retriever``) and load its embedder (one search), and read the fixed part of the mode's
        prompts (``reasoning/warmup.py``). Returns a ``WarmUp``.

        A corpus that cannot be opened is left for the question to report (the model is still
        prepared); a model that cannot be loaded raises, as a question would."""
        from .errors import SearchainError
        from .reasoning.chain.prompts import PromptBook
        from .reasoning.modes import MODE_SEARCHAIN, needs_ir
        from .reasoning.warmup import warm_prompts, warm_up

        mode = mode or self.settings.reasoning.mode
        check(cancel)
        llm = self.llm(on_event)
        check(cancel)
        if needs_ir(mode):
            try:
                self.retriever(corpus, on_event=on_event, cancel=cancel).search("warm up", k=1)
            except SearchainError:
                pass  # no usable corpus yet: the question says what is wrong
        check(cancel)
        reader = self.reader() if mode == MODE_SEARCHAIN else None
        reasoning = self.settings.reasoning
        chats = warm_prompts(mode, reasoning, PromptBook(reasoning.prompts_folder or None), reader)
        return warm_up(llm, chats, cancel)

    def _report_model_warnings(self, on_event: EventCallback | None) -> None:
        """Pass the model's ``LLMWarning``s (no chat template, GPU fallback...) to the asker once
        per load: the model is loaded without the answer's ``on_event``, so the app would only
        ever log them."""
        if on_event is None or self._llm is None:
            return
        warnings = list(getattr(self._llm, "warnings", None) or [])
        for warning in warnings[self._llm_warnings_shown:]:
            emit(on_event, warning)
        self._llm_warnings_shown = len(warnings)

    def close(self) -> None:
        """Release the loaded model and stores (the app calls this on exit)."""
        self.unload_llm()
        with self._store_lock:
            store, self._conversations = self._conversations, None
        if store is not None and hasattr(store, "close"):
            store.close()


class _LazyEmbedder:
    """Loads the shared embedder only when duplicate detection first needs a vector."""

    def __init__(self, get: Callable[[], Any]):
        self._get = get

    def encode(self, texts):
        return self._get().encode(texts)

