"""The in-process llama.cpp backend (llama-cpp-python), with KV prefix reuse.

One ``LlamaCppLLM`` holds one loaded GGUF. Each call tokenises the whole prompt, finds how many
leading tokens are already in the KV cache from the previous call, evaluates only the rest (in
``n_batch`` chunks, checking the cancel token between chunks), then samples token by token with
llama.cpp's sampler chain (greedy at temperature 0, else top-k/top-p/min-p with the given seed, and
the optional GBNF grammar). ``Usage.prompt_tokens_evaluated`` is the number of prompt tokens that
were really sent to ``llama_decode``: in a multi-round dialogue a round only evaluates what is new.
With ``prompt_lookup`` > 0, greedy decoding checks tokens copied from the context in one batch
per step (``speculation.py``): greedy decoding's tokens (up to rounding), fewer sequential steps.

Context rule: ``complete`` raises ``ModelError`` for a prompt that does not leave room for at least
one generated token; ``chat`` first drops the oldest turns (see ``chat_prompt``). Generation always
stops at the end of the context window with ``finish_reason == "length"``.

A model instance is not thread-safe: calls are serialised by a lock. ``cancel`` may be set from
any thread; generation stops before the next token with ``finish_reason == "cancelled"``.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from ...config import LLMSettings
from ...errors import ModelError
from ...events import CancelToken, EventCallback, emit
from .. import gpu
from ..base import ChatMessage, Completion, GenerationParams, TokenCallback, Usage
from ..chat_prompt import ChatPromptBuilder, fit_messages, split_prefill
from ..events import LLMWarning
from ..model_kind import CompletionPromptBuilder, prompt_style, stop_texts, strip_special_tokens
from ..models.gguf_info import ModelFacts, read_model_facts
from ..models.memory import check_memory
from .prefix_states import MIN_SAVED_TOKENS, PrefixStates, common_prefix
from .sampling import GrammarCache, TokenSampler, grammar_verdict, token_logprob, token_piece
from .draft_model import open_draft
from .llama_open import open_llama  # looked up here at each load: tests patch it in this module
from .speculation import drop_last, eval_batch_all_logits, lookup_draft
from .text_stream import StopTextStream


class LlamaCppLLM:
    """A GGUF model loaded in this process. See the module docstring for the behaviour."""

    def __init__(self, settings: LLMSettings, path: str | os.PathLike | None = None, *,
                 on_event: EventCallback | None = None):
        raw_path = path if path is not None else settings.model_path
        if not raw_path:
            raise ModelError("No model file is set.",
                             hint="Choose a GGUF in Settings, or run `searchain models pull NAME`.")
        self.path = Path(raw_path).expanduser()
        self.facts: ModelFacts = read_model_facts(self.path)
        self.name = self.path.stem
        self.warnings: list[LLMWarning] = []
        self._on_event = on_event
        self._lock = threading.Lock()
        self._grammars = GrammarCache()  # bound to the vocabulary once the model is open
        self._prefix_states = PrefixStates()  # KV states of interrupted dialogues
        # Grammar decoding samples first and checks the one token (sampling.py); False filters
        # the whole vocabulary each token, the slow reference path benchmarks compare against.
        self.grammar_sample_first = True
        # Last call: tokens the grammar refused, refusals that filtered the whole vocabulary,
        # the generated token ids, tokens drafted (speculation) and drafts the model kept.
        self.grammar_rejections = self.grammar_full_filters = self.drafted = self.draft_accepted = 0
        self._last_tokens: list[int] = []
        # Greedy decoding drafts by prompt lookup (this many tokens a step; 0 = off), or by a
        # draft model (draft_model.py) when one is set and fits: the same tokens up to rounding.
        self.prompt_lookup = max(0, int(getattr(settings, "prompt_lookup", 0) or 0))
        self.draft_model, self.draft_tokens = None, max(1, int(getattr(settings, "draft_tokens", 4) or 4))
        self._pieces: dict[int, bytes] = {}
        # Bytes and tokens of the last prompt + reply, to tokenise the next prompt incrementally.
        self._history: tuple[bytes, list[int]] = (b"", [])
        n_ctx = settings.n_ctx if settings.n_ctx > 0 else (self.facts.context_length or 4096)
        self.n_gpu_layers = self._gpu_layers(settings.n_gpu_layers)
        check_memory(self.facts, n_ctx, self.n_gpu_layers)
        load = dict(n_ctx=n_ctx, n_threads=settings.n_threads, n_batch=settings.n_batch,
                    seed=settings.seed)
        try:
            self._llama = open_llama(self.path, n_gpu_layers=self.n_gpu_layers, **load)
        except ModelError as exc:
            if self.n_gpu_layers == 0:
                raise
            # Offload can fail on drivers, VRAM or a broken CUDA install; the CPU still works.
            check_memory(self.facts, n_ctx, 0)
            self._llama = open_llama(self.path, n_gpu_layers=0, **load)
            self.n_gpu_layers = 0
            self._warn(f"GPU offload failed, running {self.name} on the CPU (slower): "
                       f"{exc.message}", "Check the GPU driver and free VRAM, or set "
                       "n_gpu_layers to a smaller number; see docs/llm.md.")
        self.n_ctx = self._llama.n_ctx()
        self.n_batch = self._llama.n_batch
        model = self._llama._model
        self._vocab = model.vocab
        self._n_vocab = model.n_vocab()
        import llama_cpp

        self._byte_level_bpe = (llama_cpp.llama_vocab_type(self._vocab)
                                == llama_cpp.LLAMA_VOCAB_TYPE_BPE)
        eos, bos = model.token_eos(), model.token_bos()
        self.prompt_style = prompt_style(self.facts)  # chat template, or plain text (base model)
        if self.prompt_style.completion:
            self._chat = CompletionPromptBuilder()
            self._warn(f"{self.path.name} {self.prompt_style.reason}: it gets plain-text prompts "
                       "and its answers will be weak.",
                       "Pick an instruction-tuned (chat) GGUF that includes its chat template, "
                       "e.g. from Settings > Model catalogue.")
        else:
            self._chat = ChatPromptBuilder(
                self.facts.chat_template,
                eos_token=model.token_get_text(eos) if eos >= 0 else "",
                bos_token=model.token_get_text(bos) if bos >= 0 else "",
            )
        if getattr(settings, "draft_model", ""):
            self.draft_model, why = open_draft(settings.draft_model, self._llama, open_llama, self._piece,
                                               n_gpu_layers=self.n_gpu_layers, **load)
            if why:
                self._warn(f"Speculative decoding is off: {why}.", "Pick a draft model of the same "
                           "family (e.g. Qwen2.5-Coder-0.5B for -1.5B), or clear llm.draft_model.")

    # -- the LLM protocol -------------------------------------------------------------------

    @property
    def supports_grammar(self) -> bool:
        return True

    @property
    def supports_prefill(self) -> bool:  # chat() continues a trailing assistant message
        return True

    def complete(self, prompt: str, params: GenerationParams = GenerationParams(), *,
                 on_token: TokenCallback | None = None,
                 cancel: CancelToken | None = None) -> Completion:
        tokens = self._prompt_tokens(prompt, add_special=True)
        if len(tokens) >= self.n_ctx:
            raise ModelError(
                f"The prompt is {len(tokens)} tokens but the context holds {self.n_ctx}.",
                hint="Shorten the prompt or raise the context size (Settings > LLM > n_ctx).",
            )
        return self._generate(tokens, prompt.encode("utf-8"), params, on_token, cancel)

    def chat(self, messages: Sequence[ChatMessage], params: GenerationParams = GenerationParams(),
             *, on_token: TokenCallback | None = None,
             cancel: CancelToken | None = None) -> Completion:
        """A reply to ``messages``. When the last message is the assistant's, the reply goes on
        from its text (a prefill: the model continues it, the returned text is only what follows)."""
        rendered: dict[int, tuple[str, list[int]]] = {}
        messages, prefill = split_prefill(messages)

        def count(msgs: Sequence[ChatMessage]) -> int:
            text = self._chat.render(msgs) + prefill
            rendered[len(msgs)] = (text, self._prompt_tokens(text, add_special=False))
            return len(rendered[len(msgs)][1])

        kept, dropped = fit_messages(messages, count_tokens=count, n_ctx=self.n_ctx,
                                     max_tokens=params.max_tokens)
        text, tokens = rendered[len(kept)]
        completion = self._generate(tokens, text.encode("utf-8"), params, on_token, cancel)
        return dataclasses.replace(completion, dropped_messages=dropped)

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
            self._grammars.close()  # they point into the model's vocabulary
            self._prefix_states.clear()
            if llama is not None:
                llama.close()
            if self.draft_model is not None:
                self.draft_model.close()
                self.draft_model = None

    # -- helpers others may use -------------------------------------------------------------

    def render_chat(self, messages: Sequence[ChatMessage]) -> str:
        """The prompt text ``chat`` would send for ``messages`` (before any trimming)."""
        return self._chat.render(messages)

    def tokenize(self, text: str, *, add_special: bool = True) -> list[int]:
        """Token ids of ``text``; control tokens written in the text (``<|im_start|>``) count."""
        llama = self._require_open()
        return llama.tokenize(text.encode("utf-8"), add_bos=add_special, special=True)

    def last_generated_tokens(self) -> list[int]:
        """The token ids the last ``complete``/``chat`` generated (tests and benchmarks)."""
        return list(self._last_tokens)

    def grammar_verdict(self, grammar: str, output: str | list[int]) -> str:
        """Whether ``output`` (text, or token ids from ``last_generated_tokens``) is a whole output of
        the GBNF ``grammar`` (``"complete"``), a valid beginning of one (``"incomplete"``) or
        not (``"rejected"``), checked by llama.cpp's grammar engine token by token. Text is
        tokenised with control-token names as plain text."""
        with self._lock:
            compiled = self._grammars.get(self._vocab, grammar)
            llama = self._require_open()
            tokens = output if isinstance(output, list) else llama.tokenize(
                output.encode("utf-8"), add_bos=False, special=False)
            return grammar_verdict(compiled, tokens, llama._model.token_eos())

    def reset_cache(self) -> None:
        """Forget the KV cache, so the next call evaluates its whole prompt (benchmarks use it)."""
        with self._lock:
            llama = self._require_open()
            llama.reset()
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            self._prefix_states.clear()
            self._history = (b"", [])

    def _prompt_tokens(self, text: str, *, add_special: bool) -> list[int]:
        """Tokenise a prompt. A prompt that extends the previous prompt + reply (the next round
        of a dialogue) keeps that text's tokens, the reply's exactly as generated, and tokenises
        only the new text: re-tokenising the reply could merge its bytes differently and defeat
        KV-cache reuse from the point where it differs. Only for byte-level BPE vocabularies:
        SentencePiece would give the separately tokenised text a spurious leading space."""
        llama = self._require_open()
        data = text.encode("utf-8")
        seen_bytes, seen_tokens = self._history
        if not (seen_tokens and data.startswith(seen_bytes)):  # an interrupted dialogue's round
            seen_bytes, seen_tokens = self._prefix_states.history_for(data) or (b"", [])
        if seen_tokens and self._byte_level_bpe and data.startswith(seen_bytes):
            rest = data[len(seen_bytes):]
            try:
                rest.decode("utf-8")  # the reply may end inside a character: then start over
            except UnicodeDecodeError:
                pass
            else:
                new = llama.tokenize(rest, add_bos=False, special=True) if rest else []
                return seen_tokens + new
        return llama.tokenize(data, add_bos=add_special, special=True)

    def _remember(self, tokens: list[int], prompt_bytes: bytes, generated: list[int],
                  text: str) -> None:
        """Record prompt + reply for ``_prompt_tokens``: the generated tokens whose bytes are a
        prefix of the returned text (a stop sequence may have cut the text mid-token)."""
        target = text.encode("utf-8")
        kept, size = 0, 0
        for token in generated:
            piece = self._piece(token)
            if target[size:size + len(piece)] != piece:
                break
            kept, size = kept + 1, size + len(piece)
        self._history = (prompt_bytes + target[:size], tokens + generated[:kept])

    # -- generation -------------------------------------------------------------------------

    def _generate(self, tokens: list[int], prompt_bytes: bytes, params: GenerationParams,
                  on_token: TokenCallback | None, cancel: CancelToken | None) -> Completion:
        if not tokens:
            raise ModelError("The prompt is empty.", hint="Pass some text to complete.")
        with self._lock:  # compiled under the lock: compiling may evict (close) another grammar
            grammar = self._grammars.get(self._vocab, params.grammar) if params.grammar else None
            llama = self._require_open()
            started = time.perf_counter()
            evaluated, finished = self._eval_prompt(llama, tokens, cancel)
            prompt_seconds = time.perf_counter() - started
            # Template markers written as text end the reply (a base model goes on to imagine
            # the next turn); whatever is left of them is stripped from the returned text.
            stream = StopTextStream(tuple(params.stop) + stop_texts(self.prompt_style), on_token)
            logprobs: list[float] = []
            generated: list[int] = []
            self._history = (b"", [])
            finish = "cancelled"
            if finished:
                finish = "length"
                max_new = min(params.max_tokens, self.n_ctx - len(tokens))
                sampler = TokenSampler(self._n_vocab, temperature=params.temperature,
                                       seed=params.seed, grammar=grammar,
                                       sample_first=self.grammar_sample_first)
                # Drafts only under greedy decoding, where the model's own choice is checkable.
                draft = self.draft_model if params.temperature <= 0.0 else None
                lookup = (self.draft_tokens if draft else self.prompt_lookup) if params.temperature <= 0.0 else 0
                context = np.asarray(tokens, dtype=np.int32) if lookup else None
                index, drafts = -1, []  # logits position to sample; drafted tokens in the cache
                self.drafted = self.draft_accepted = 0
                try:
                    while len(generated) < max_new:
                        if cancel is not None and cancel.cancelled:
                            finish = "cancelled"
                            break
                        token = sampler.sample(llama._ctx.ctx, index)
                        if self._is_end_of_generation(token):
                            finish = "stop"
                            break
                        generated.append(token)
                        if params.logprobs:
                            logprobs.append(self._token_logprob(llama, token, index))
                        if stream.feed(self._piece(token)):
                            finish = "stop"
                            break
                        if drafts and token == drafts[0]:  # the model wrote the draft's token
                            drafts.pop(0)
                            index += 1
                            self.draft_accepted += 1
                            continue
                        drop_last(llama, len(drafts))
                        drafts = []
                        if len(generated) >= max_new:
                            break
                        if lookup:
                            context = np.append(context, generated[len(context) - len(tokens):])
                            room = min(lookup, max_new - len(generated) - 1, self.n_batch - 1)
                            drafts = draft.draft(context, room) if draft else lookup_draft(context, room)
                        if drafts:
                            eval_batch_all_logits(llama, [token, *drafts])
                            self.drafted += len(drafts)
                            index = 0
                        else:
                            llama.eval([token])
                            index = -1
                    drop_last(llama, len(drafts))  # drafted past where generation ended
                finally:
                    self.grammar_rejections = sampler.rejections
                    self.grammar_full_filters = sampler.full_filters
                    self._last_tokens = generated
                    sampler.close()
            text = stream.finish()
            if finished:
                self._remember(tokens, prompt_bytes, generated, text)
        return Completion(
            text=strip_special_tokens(text),
            usage=Usage(len(tokens), evaluated, len(generated)),
            finish_reason=finish,
            seconds=time.perf_counter() - started,
            prompt_seconds=prompt_seconds,
            token_logprobs=tuple(logprobs),
            stopped_at=stream.stop_text,
        )

    def _eval_prompt(self, llama, tokens: list[int], cancel: CancelToken | None
                     ) -> tuple[int, bool]:
        """Evaluate the part of ``tokens`` not already in the KV cache; return (how many tokens
        were evaluated, False if cancelled part-way). The last prompt token is always evaluated
        so that its logits are fresh for sampling."""
        cached = llama.n_tokens
        reuse = 0
        if cached:
            reuse = min(common_prefix(llama.input_ids[:cached], np.asarray(tokens)), len(tokens) - 1)
        if cached - reuse >= MIN_SAVED_TOKENS:  # about to drop a dialogue: keep it aside
            self._prefix_states.save(llama._ctx.ctx, llama.input_ids[:cached], self._history)
        index, usable = self._prefix_states.best(np.asarray(tokens, dtype=np.int32), reuse)
        if index >= 0:  # an earlier dialogue shares more of this prompt than the live cache
            saved = self._prefix_states.restore(llama._ctx.ctx, index)
            llama.input_ids[:len(saved)] = saved
            cached = llama.n_tokens = len(saved)
            reuse = usable
        if reuse < cached and not llama._ctx.kv_cache_seq_rm(-1, reuse, -1):
            reuse = 0  # this model's cache cannot be cut part-way (recurrent models)
            llama.reset()
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        llama.n_tokens = reuse
        new = tokens[reuse:]
        for start in range(0, len(new), self.n_batch):
            if cancel is not None and cancel.cancelled:
                return start, False
            llama.eval(new[start:start + self.n_batch])
        return len(new), True

    def _is_end_of_generation(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self._vocab, token))

    def _piece(self, token: int) -> bytes:
        """The bytes of one token (cached: the vocabulary never changes)."""
        piece = self._pieces.get(token)
        if piece is None:
            piece = self._pieces[token] = token_piece(self._vocab, token)
        return piece

    def _token_logprob(self, llama, token: int, index: int = -1) -> float:
        return token_logprob(llama._ctx.ctx, self._n_vocab, token, index)

    def _gpu_layers(self, requested: int) -> int:
        if requested > 0 and not gpu.gpu_offload_supported():
            self._warn(f"n_gpu_layers={requested} was asked for, but this llama-cpp-python build "
                       "cannot offload to a GPU; running on the CPU.",
                       "Install the CUDA build of llama-cpp-python (see docs/llm.md).")
        return gpu.resolve_gpu_layers(requested)

    def _warn(self, message: str, hint: str = "") -> None:
        warning = LLMWarning(message, hint)
        self.warnings.append(warning)
        emit(self._on_event, warning)

    def _require_open(self):
        if self._llama is None:
            raise ModelError(f"The model {self.name} was closed.", hint="Load it again.")
        return self._llama

    def __del__(self):  # free the C-side model even when close() was forgotten
        try:
            self.close()
        except Exception:
            pass
