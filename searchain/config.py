"""Where SearChain keeps its files, and the one typed settings object.

Directories follow the platform's conventions (platformdirs). ``SEARCHAIN_HOME`` (or the CLI's
``--home``) puts config, data and cache under one folder instead, which is how tests run
against a temporary home.

Layout under ``data_dir``::

    corpora/<name>/passages.db   passages + FTS5 (searchain.corpus)
    corpora/<name>/index/        embeddings + hnsw index (searchain.index)
    models/                      GGUF files and reader models (searchain.llm, searchain.reader)
    conversations.db             saved chats (searchain.store)
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .files import atomic_write_text

HOME_ENV = "SEARCHAIN_HOME"
APP_NAME = "SearChain"


@dataclass(frozen=True)
class AppPaths:
    config_dir: Path
    data_dir: Path
    cache_dir: Path

    @classmethod
    def resolve(cls, home: str | os.PathLike | None = None) -> "AppPaths":
        """Paths under ``home``, else under ``$SEARCHAIN_HOME``, else the platform's user dirs."""
        home = home or os.environ.get(HOME_ENV)
        if home:
            root = Path(home).expanduser().resolve()
            return cls(root / "config", root / "data", root / "cache")
        import platformdirs

        return cls(
            Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
        )

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def corpora_dir(self) -> Path:
        return self.data_dir / "corpora"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def conversations_db(self) -> Path:
        return self.data_dir / "conversations.db"

    @property
    def log_dir(self) -> Path:
        """Log files (``searchain.logs``); created by the first log write, not by ``ensure``."""
        return self.cache_dir / "logs"

    def ensure(self) -> "AppPaths":
        for d in (self.config_dir, self.data_dir, self.cache_dir, self.corpora_dir, self.models_dir):
            d.mkdir(parents=True, exist_ok=True)
        return self


@dataclass
class RetrievalSettings:
    embedder: str = "sentence-transformers/all-MiniLM-L6-v2"
    # A second embedding model whose cosine joins the first's on the dense side of hybrid fusion
    # (each corpus then keeps a second index, ``index/second``); "" = off; "auto" = all-mpnet-base-v2
    # when installed and this CPU embeds in bfloat16 (index/embed/second.py). See docs/retrieval.md.
    second_embedder: str = "auto"
    # auto | fp32 | bf16: bfloat16 matrix products where the CPU has native bf16 (2.4-2.8x faster,
    # vectors within 1e-4 cosine of float32); see index/embed/precision.py.
    embed_precision: str = "auto"
    # auto | cpu | cuda: where embedding runs; auto = a CUDA GPU when torch sees one (index/embed/device.py).
    embed_device: str = "auto"
    retriever: str = "hybrid"  # dense | bm25 | hybrid; the default is the one that measured best
    # hnswlib parameters: since the compact index (index/ann/compact.py) only `bench index` uses them;
    # kept so that settings files that hold them stay valid.
    hnsw_m: int = 32
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = 128
    # Passages per forward pass when embedding. Small batches pad less: on 2 CPU cores batch 8
    # embedded mpnet 3.4x and MiniLM 1.3x faster than 64 (docs/retrieval.md, session 10).
    batch_size: int = 8
    gpu_batch_size: int = 0  # the same on a GPU, which needs large batches; 0 = 512 (measured, H100)
    bm25_title_weight: float = 2.0  # FTS5 column weight of the title against the text's 1.0
    bm25_idf_power: float = 1.0  # weight each query term by idf**p on top of BM25 (0 = plain BM25)
    hybrid_dense_weight: float = 0.5  # share of the dense score in hybrid fusion
    hybrid_depth: int = 50  # candidates each side proposes to the fusion
    hybrid_method: str = "zscore"  # zscore | minmax (normalised score fusion) | rrf
    # Bonus when the query names a passage's title, in fused-score units (standard deviations
    # under zscore fusion); 0 = off.
    hybrid_title_boost: float = 0.0
    # A cross-encoder that re-orders the first stage's best ``rerank_depth`` candidates: a name
    # under <models_dir>/rerankers (``searchain reranker pull``) or a folder; "" = off.
    reranker: str = ""
    rerank_depth: int = 20


@dataclass
class LLMSettings:
    model_path: str = ""  # a GGUF file; empty until the user picks or downloads one
    backend: str = "llama_cpp"  # llama_cpp | openai
    server_url: str = ""  # for the OpenAI-compatible backend
    server_model: str = ""  # model name on that server; empty = the first one it lists
    # Sent as a Bearer token; "" = none (then $SEARCHAIN_LLM_API_KEY). Never printed: `config
    # show` masks it and errors name the server, not the key.
    server_key: str = ""
    # Seconds to wait for the server to connect or send the next piece of a reply.
    server_timeout: float = 120.0
    # Output constrained by a GBNF grammar (llama.cpp's `grammar` field): auto = find out with one
    # tiny request on first use; off = prompting and the tolerant parser only (llm/server/server_probe.py).
    server_grammar: str = "auto"
    # Which server it is, for the switches only one family takes (thinking off, sampling):
    # auto = read from the server's model list (and Ollama's /api/version).
    server_family: str = "auto"
    n_gpu_layers: int = -1  # -1 = auto: all layers when the build can offload, else 0
    n_ctx: int = 4096
    n_threads: int = 0  # 0 = let llama.cpp choose
    n_batch: int = 512
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 512
    use_grammar: bool = True
    # Speculative decoding by prompt lookup (llm/llama/speculation.py): up to this many tokens copied
    # from the prompt are checked in one batch per step, under greedy decoding only (the output
    # is the same); 0 = plain decoding.
    prompt_lookup: int = 0
    # A small GGUF of the same family (same vocabulary) that drafts tokens for greedy decoding
    # (llm/llama/draft_model.py): ``draft_tokens`` per step; "" = none. A draft model whose vocabulary
    # differs is refused with a warning, and decoding goes on without it.
    draft_model: str = ""
    draft_tokens: int = 4
    # The app loads the model and reads the fixed part of its prompts when it starts and after
    # the model changes (reasoning/warmup.py), so that the first answer is as fast as the next;
    # the model's memory is taken from the start. Models run here only (a server keeps its own).
    warm_up: bool = True
    # process: llama.cpp runs in a worker process, so a native crash cannot end the app
    # (llm/llama/isolated.py); inprocess: in this process (no worker start-up; a crash ends the app).
    isolation: str = "process"
    # Folders of GGUF files to list beside the app's own and the other apps' stores
    # (llm/models/discovery.py); absolute paths, "~" allowed. Models are used where they lie.
    model_folders: list[str] = field(default_factory=list)


@dataclass
class ReasoningSettings:
    mode: str = "searchain"  # searchain | coq | direct | rag | genground | geek
    reader: str = "auto"  # auto | dpr | llm
    reader_model: str = "facebook/dpr-reader-multiset-base"  # DPR reader, in models/readers/
    task: str = "auto"  # auto | multihop | yesno | longform: which CoQ prompt variant
    theta: float = 1.5  # reader confidence above which IR corrects the LLM (DPR relevance logit)
    llm_reader_theta: float = 0.5  # the LLM reader's own threshold (probability scale)
    alpha: float = 0.35  # ROUGE-L consistency threshold for long-form answers
    r_max: int = 5
    top_k: int = 1  # passages retrieved per node (1 = the paper's setting)
    # How the final answer is written from the verified path (BENCHMARKS.md, "The final answer"):
    # passages: read like RAG reads, over the question's own top passages and the path's passages;
    # tracing: the paper's, over the path's [Query]-[Answer] pairs with their evidence.
    final_answer: str = "passages"
    # Passages retrieved for the whole question that the final answer also reads and may cite
    # (0 = the path's only, the paper's setting; 3 = what plain RAG reads).
    question_passages: int = 3
    rerank: bool = False
    duplicate_threshold: float = 0.9  # cosine above which two queries are the same
    followup_turns: int = 3  # earlier turns a follow-up is rewritten with (0: take questions as typed)
    # Characters of the passage quoted in IR's feedback, around the answer (1200: the passage as
    # the prompts have always quoted it). 300 was measured on HotpotQA: no fewer tokens evaluated
    # (the model wrote more rounds), same answers (BENCHMARKS.md, "Shorter feedback").
    feedback_chars: int = 1200
    # Inline feedback: characters of the passage quoted on the [Reference] line after IR's answer,
    # around the answer (reasoning/loop/run.py). The line is most of what a chain evaluates.
    reference_chars: int = 320
    # How SearChain's model writes each round's chain: "stepwise", one step at a time, each checked
    # before the next is written (nothing decoded that IR would discard; reasoning/loop/stepwise.py),
    # or "whole", as the paper does. Stepwise needs a model run by llama.cpp here.
    chain_steps: str = "stepwise"
    # Stepwise only: each round after feedback begins with the settled steps already written into
    # the model's reply (evaluated, not decoded) instead of the model copying them out. Measured
    # off: fewer tokens decoded a round, but handed a reply mid-chain, Qwen2.5-1.5B asked on where
    # it had concluded, 2.75 rounds a question against 2.15, 25 % slower (BENCHMARKS.md, Lever 6).
    prefill_settled: bool = False
    # Stepwise only: how IR's correction or completion of a step reaches the model. "inline": IR's
    # answer replaces the model's in its reply and the chain goes on in the same round, with the
    # passage around IR's answer after it; "turn": a user turn quoting the passage, after which
    # the model writes a new chain (the paper's). Measured on HotpotQA's first 200 with
    # Qwen2.5-Coder-1.5B: a quarter less time (SearChain/RAG 2.6 against 3.6), as many answers
    # right (8 lost, 6 won; on the 100 not used to design it 3 lost, 4 won, F1 0.418 against
    # 0.393) (BENCHMARKS.md, Levers 9 and 10).
    feedback_style: str = "inline"
    # SearChain with the "passages" final answer: first write plain RAG's answer over the
    # question's passages (shown as a draft at RAG's speed), then check it. The final answer
    # reads those passages plus the path's; when the path adds none, its prompt is the draft's,
    # so the draft is the final answer; otherwise it continues from the draft prompt's saved KV.
    # Measured: first answer at 1.00x RAG's time, the whole answer's cost unchanged (BENCHMARKS.md, Lever 7).
    draft_answer: bool = True
    # With a draft and a chain written step by step: write the chain's first step before the
    # draft (then IR checks it), so the tree's first node shows within one chain step of asking,
    # and the draft one step later; off (and for whole chains), the draft comes first and the
    # first node after it (BENCHMARKS.md, Lever 13).
    draft_after_first_step: bool = True
    # The "passages" final answer with the path's checked steps listed after the passages
    # ("Where was Teodor Vance born? Lisk [3]"). "off" (the default): passages only (the draft is
    # the final answer when the path adds no passage); "disagree": listed, asked again where the
    # draft lacks the path's last checked answer; "always": asked again after any checked step;
    # "found": listed and asked again only where IR itself answered the last step, the draft lacks
    # it, and the question asks for a thing. found won 2 of 78 on HotpotQA 401-478 but lost 4 and
    # won none of the goal's first 25, 1.65 s slower (BENCHMARKS.md, "The chain's checked steps").
    final_steps: str = "off"
    # Read a yes/no step's passage ("Is 749 ft greater than 628 ft?") with the reader, which copies
    # spans and cannot say yes or no: of 36 such steps measured it found nothing on 33, an
    # unconfirming span on 2 (the chain goes on the same either way), a nonsense correction on 1.
    # Off (the default): the passage is retrieved and shown, not read (decision "not_read"), a
    # reader call fewer (BENCHMARKS.md, "Yes/no steps not read").
    read_yes_no_steps: bool = False
    # A stated answer that is a sentence ("So the final answer is Kate Millett attended Oxford
    # University.") cut to the words that answer ("Oxford") by the LLM reader's span prompt over
    # that sentence; the final content keeps the sentence (reasoning/concise.py, BENCHMARKS.md).
    concise_answer: bool = True
    # A folder of prompt templates (NAME.txt, as in resources/prompts) that replace the built-in
    # ones of the same name; empty: the built-in ones.
    prompts_folder: str = ""
    # GEEK: the most characters of the reasoning each branch writes before its final answer
    # (8-4000). Its decoding is most of GEEK's time on a CPU; 80 was a quarter faster and lost a
    # right answer in 10 (BENCHMARKS.md, "GEEK against SearChain now"), so 300 stays.
    geek_reasoning_chars: int = 300
    # GEEK: alternative sub-questions the model may write per decomposition, each a branch of
    # its own (1-9; 1 = one line of reasoning). The paper's n = 4 took 4x SearChain's time; 2 took
    # 1.6x with as many right answers (8 of 40 each), 1 lost answers (BENCHMARKS.md, "GEEK with
    # fewer alternatives").
    geek_branches: int = 2


@dataclass
class CorpusSettings:
    # A folder's file larger than this (in MB, 10^6 bytes) is reported and not read: one huge
    # file must not hold up or exhaust the memory of an ingest (each file is read whole). 0 = no limit.
    max_file_mb: float = 200.0
    # Keep folder corpora in sync in the app: update them when it starts and, while it runs, a
    # little after their files change (a file watcher). Off by default: an update reads files.
    sync_folders: bool = False
    # Processes that parse a large dump, ZIM file or folder of documents during ingest
    # (corpus.parallel); 0 = auto: every core (at most 16) for over 8 MB, none beside the
    # ingest's own for less.
    ingest_workers: int = 0

    @property
    def max_file_bytes(self) -> int | None:
        return int(self.max_file_mb * 1e6) if self.max_file_mb > 0 else None


@dataclass
class Settings:
    """Everything a user can set. Persisted as JSON, only the values changed from their defaults
    (``settings_file``); unknown keys are ignored on load."""

    active_corpus: str = "demo"
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    reasoning: ReasoningSettings = field(default_factory=ReasoningSettings)
    corpus: CorpusSettings = field(default_factory=CorpusSettings)
    ui: dict[str, Any] = field(default_factory=dict)  # window geometry etc., owned by desktop/

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], problems: list[str] | None = None) -> "Settings":
        """Settings from a JSON document. Each value is checked (type, choices, range:
        ``settings_schema``): a bad one raises ConfigError naming its key, or, when a
        ``problems`` list is given, is described there and replaced by its default."""
        from .settings_schema import from_dict

        return from_dict(cls, data, "settings", problems)

    @classmethod
    def load(cls, paths: AppPaths, problems: list[str] | None = None,
             notes: list[str] | None = None) -> "Settings":
        """Read settings; a missing file gives defaults, one that is not JSON a clear ConfigError.
        ``problems``: collect bad values (and unknown keys) there instead of failing on them.
        ``notes``: where a file written before settings kept only what was changed gets the
        defaults improved since (``settings_file``), one line per value."""
        path = paths.settings_file
        if not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:  # Recursion: JSON nested thousands deep
            raise ConfigError(f"Cannot read settings file {path}: {exc}", hint=UNREADABLE_HINT) from exc
        if not isinstance(data, dict):
            raise ConfigError(f"Settings file {path} does not hold a JSON object.", hint=UNREADABLE_HINT)
        from .settings_file import adopt_changed_defaults

        try:
            written_at = path.stat().st_mtime
        except OSError:
            written_at = 0.0  # read a moment ago: as good as unknown, and as old as can be
        adopted = adopt_changed_defaults(data, cls(), written_at)
        if notes is not None:
            notes += adopted
        if problems is not None:
            from .settings_schema import unknown_key_notes

            problems += unknown_key_notes(data, cls)
        try:
            return cls.from_dict(data, problems)
        except ConfigError as exc:
            exc.hint = exc.hint or (f"Fix it in {path}, or with `searchain config set KEY VALUE` / "
                                    "`searchain config reset KEY`.")
            raise

    @staticmethod
    def set_aside(paths: AppPaths) -> Path:
        """Rename an unreadable settings file to ``settings.json.unreadable-<time>`` (numbered
        when taken), so starting again from the defaults loses nothing; returns the new path."""
        import time

        path = paths.settings_file
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside, n = path.with_name(f"{path.name}.unreadable-{stamp}"), 1
        while aside.exists():
            n += 1
            aside = path.with_name(f"{path.name}.unreadable-{stamp}-{n}")
        try:
            path.rename(aside)
        except OSError as exc:
            raise ConfigError(f"Cannot move the settings file {path} aside: {exc}",
                              hint="Check that its folder is writable.") from exc
        return aside

    def save(self, paths: AppPaths) -> None:
        """Write atomically (temp file + rename) so a crash never leaves half a settings file.
        Only the values not at their default are written (``settings_file.saved_form``)."""
        from .settings_file import saved_form

        paths.config_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(paths.settings_file, json.dumps(saved_form(self), indent=2))


# For a settings file that is not JSON (or not an object): what to do about it.
UNREADABLE_HINT = ("Fix the JSON by hand, or run `searchain config reset --all` to go back to the "
                   "defaults (the file is kept beside it).")


def source_root() -> Path:
    """The folder that holds the ``searchain`` package (a checkout, or site-packages): a child
    process that must import this same ``searchain`` gets it on its ``PYTHONPATH``."""
    return Path(__file__).resolve().parent.parent


def resources_dir() -> Path:
    """The project's ``resources/`` folder (prompts, demo corpus, icons)."""
    return source_root() / "resources"
