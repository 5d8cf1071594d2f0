"""Model and reasoning settings: GGUF, GPU layers (with detected offload support), context,
threads; the Reasoning group (`reasoning_settings.ReasoningBox`); retrieval, with the optional
cross-encoder re-ranker (choose, download). Saved on Apply/OK."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from searchain.index import DEFAULT_RERANKER
from searchain.llm import starter_label

from ..context import AppContext
from ..workers import JobRunner
from .reasoning_settings import ReasoningBox, combo_box, spin_box

RETRIEVER_LABELS = {"hybrid": "Hybrid: embeddings + keywords (best measured)",
                    "dense": "Embeddings only (dense)", "bm25": "Keywords only (BM25)"}
PRECISION_LABELS = {"auto": "Automatic",
                    "fp32": "float32 (slower, exact)", "bf16": "bfloat16", "fp16": "float16 (GPUs)"}
DEVICE_LABELS = {"auto": "Automatic", "cpu": "CPU", "cuda": "NVIDIA GPU (CUDA)"}


class SettingsDialog(QDialog):
    applied = Signal(bool)  # whether the model settings changed

    def __init__(self, ctx: AppContext, runner: JobRunner, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Model and reasoning settings")
        self.ctx = ctx
        llm, reasoning = ctx.settings.llm, ctx.settings.reasoning
        self.model_path = QLineEdit(llm.model_path, self)
        self.model_path.setObjectName("modelPath")
        starter = starter_label(replace(llm, model_path=""), ctx.paths.models_dir)
        self.model_path.setPlaceholderText(
            f"None chosen: the tiny starter model ({starter}) answers; Browse… or Settings > Model catalogue"
            if starter else "None chosen: Browse… for a GGUF file, or Settings > Model catalogue")
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.model_path, 1)
        path_row.addWidget(browse)
        self.gpu_layers = spin_box(self, -1, 999, llm.n_gpu_layers, "gpuLayers", special="auto")
        self.gpu_support = QLabel("checking GPU offload support…", self)
        self.gpu_support.setObjectName("gpuSupport")
        self.n_ctx = spin_box(self, 256, 131072, llm.n_ctx, "nCtx", step=256)
        self.n_threads = spin_box(self, 0, 256, llm.n_threads, "nThreads", special="automatic")
        self.warm_up = QCheckBox("Load the model when the app starts, so the first answer is as fast as the next", self)
        self.warm_up.setObjectName("warmUp")
        self.warm_up.setChecked(llm.warm_up)
        self.warm_up.setToolTip("The model's memory is taken from the start; off: it loads with the first question.")
        model_box = QGroupBox("Model", self)
        form = QFormLayout(model_box)
        self.server_note = QLabel(self._server_note(), self)
        self.server_note.setObjectName("serverNote")
        self.server_note.setTextFormat(Qt.TextFormat.PlainText)
        self.server_note.setWordWrap(True)
        self.server_note.setVisible(llm.backend == "openai")
        form.addRow(self.server_note)
        form.addRow("GGUF file:", path_row)
        form.addRow("GPU layers:", self.gpu_layers)
        form.addRow("", self.gpu_support)
        form.addRow("Context size:", self.n_ctx)
        form.addRow("Threads:", self.n_threads)
        form.addRow("Start-up:", self.warm_up)

        self.reasoning_box = ReasoningBox(reasoning, self)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Apply
                                   | QDialogButtonBox.StandardButton.Cancel
                                   | QDialogButtonBox.StandardButton.RestoreDefaults, self)
        self.restore_button = buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        self.restore_button.setToolTip("Put every field back to its default (the model file stays); "
                                       "nothing is saved until OK or Apply.")
        self.restore_button.clicked.connect(self.restore_defaults)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        layout = QVBoxLayout(self)
        layout.addWidget(model_box)
        layout.addWidget(self.reasoning_box)
        layout.addWidget(self._retrieval_box(runner))
        layout.addWidget(buttons)
        runner.start("gpu-check", _gpu_supported, on_done=self.show_gpu_support,
                     on_error=lambda _exc: self.show_gpu_support(None))

    def _retrieval_box(self, runner: JobRunner) -> QGroupBox:
        retrieval = self.ctx.settings.retrieval
        self.runner = runner
        self.reranker = QComboBox(self)
        self.reranker.setObjectName("reranker")
        self.reranker.setToolTip("A cross-encoder reads the query with each of the best candidates "
                                 "and re-orders them: usually a better top passage, a little slower.")
        self._fill_rerankers(retrieval.reranker)
        self.rerank_depth = spin_box(self, 1, 200, retrieval.rerank_depth, "rerankDepth")
        self.download_reranker = QPushButton(f"Download {DEFAULT_RERANKER.split('/')[-1]}", self)
        self.download_reranker.setObjectName("downloadReranker")
        self.download_reranker.clicked.connect(self._download_reranker)
        self.reranker_status = QLabel("", self)
        self.reranker_status.setObjectName("rerankerStatus")
        self.reranker_status.setTextFormat(Qt.TextFormat.PlainText)  # errors quote paths and names
        self.reranker_status.setWordWrap(True)
        self.reranker_status.setVisible(False)
        self.reranker.currentIndexChanged.connect(self._reranker_changed)
        self._reranker_changed()
        self.retriever = combo_box(self, RETRIEVER_LABELS, retrieval.retriever, "retriever")
        self.retriever.setToolTip("How passages are found. Hybrid fuses the embedding and keyword "
                                  "rankings and measured best on MuSiQue and HotpotQA (BENCHMARKS.md).")
        self.second_embedder = QComboBox(self)
        self.second_embedder.setObjectName("secondEmbedder")
        self.second_embedder.setToolTip(
            "A second embedding model whose similarities are averaged with the first's in hybrid "
            "search: a better top passage on MuSiQue (BENCHMARKS.md), but every corpus is embedded "
            "twice, and all-mpnet-base-v2 takes about 5 times MiniLM's time in bfloat16 (7 times "
            "in float32). Automatic uses it where it is installed and the CPU has bfloat16 or "
            "embedding runs on a GPU, and only for corpora it embeds within 10 minutes (on held-out "
            "questions it gained nothing, so its cost is paid only where it is small). "
            "Takes effect for a corpus once its index is updated (Corpus manager).")
        self._fill_second_embedders(retrieval.second_embedder)
        from searchain.index import cpu_has_native_bf16

        here = "bfloat16" if cpu_has_native_bf16() else "float32"  # /proc/cpuinfo: no torch import
        labels = {**PRECISION_LABELS, "auto": f"Automatic ({here} here)"}
        self.embed_precision = combo_box(self, labels, retrieval.embed_precision, "embedPrecision")
        self.embed_precision.setToolTip(
            "bfloat16 arithmetic embeds passages 2.1-2.8 times faster on CPUs with native bfloat16 "
            "(AVX512-BF16 or AMX), and its vectors match float32 to a cosine of 0.9999, so indexes "
            "built either way stay compatible. Elsewhere it is emulated and slower, which is why "
            "Automatic uses float32 there.")
        from searchain.index import cuda_build

        # Which torch is installed is read from its files: importing torch here would stall the UI.
        here = "a GPU when torch sees one" if cuda_build() else "CPU here: torch is a CPU-only build"
        self.embed_device = combo_box(self, {**DEVICE_LABELS, "auto": f"Automatic ({here})"},
                                        retrieval.embed_device, "embedDevice")
        self.embed_device.setToolTip(
            "Where passages are embedded when an index is built. An NVIDIA GPU with a CUDA build of "
            "torch embeds about 30 times faster than a few CPU cores (BENCHMARKS.md); the README's "
            "'GPU embedding' section says how to install it. Automatic takes the GPU when torch "
            "sees one.")
        row = QHBoxLayout()
        row.addWidget(self.reranker, 1)
        row.addWidget(self.download_reranker)
        box = QGroupBox("Retrieval", self)
        form = QFormLayout(box)
        form.addRow("Retriever:", self.retriever)
        form.addRow("Second embedding model:", self.second_embedder)
        form.addRow("Embedding arithmetic:", self.embed_precision)
        form.addRow("Embedding device:", self.embed_device)
        form.addRow("Re-ranker:", row)
        form.addRow("Candidates re-ranked:", self.rerank_depth)
        form.addRow("", self.reranker_status)
        return box

    def _fill_rerankers(self, current: str) -> None:
        from searchain.index import installed_rerankers

        self.reranker.clear()
        self.reranker.addItem("Off", "")
        for name in installed_rerankers(self.ctx.paths):
            self.reranker.addItem(name, name)
        if current and self.reranker.findData(current) < 0:  # a folder chosen by hand elsewhere
            self.reranker.addItem(current, current)
        self.reranker.setCurrentIndex(max(0, self.reranker.findData(current)))

    def _fill_second_embedders(self, current: str) -> None:
        from searchain.index import (
            AUTO_SECOND_EMBEDDER, PACKAGED_EMBEDDERS, auto_second_embedder, find_packaged_parts, packaged_is_assembled,
        )

        choice = auto_second_embedder(self.ctx.settings.retrieval, self.ctx.paths.models_dir)
        self.second_embedder.addItem(f"Automatic ({choice.model or 'off'} here)", AUTO_SECOND_EMBEDDER)
        self.second_embedder.setItemData(0, f"Automatic: {choice.reason}.", Qt.ItemDataRole.ToolTipRole)
        self.second_embedder.addItem("Off", "")
        for spec in PACKAGED_EMBEDDERS.values():
            if packaged_is_assembled(spec, self.ctx.paths.models_dir) or find_packaged_parts(spec) is not None:
                self.second_embedder.addItem(spec.name, spec.name)
            else:
                self.second_embedder.setToolTip(self.second_embedder.toolTip() + f"\n\n{spec.name} "
                                                f"is listed here once installed: {spec.pip_command}")
        if current and self.second_embedder.findData(current) < 0:  # set by hand or not installed
            self.second_embedder.addItem(current, current)
        self.second_embedder.setCurrentIndex(max(0, self.second_embedder.findData(
            AUTO_SECOND_EMBEDDER if current.strip().lower() == AUTO_SECOND_EMBEDDER else current)))

    def _reranker_changed(self) -> None:
        self.rerank_depth.setEnabled(bool(self.reranker.currentData()))
        installed = self.reranker.findData(DEFAULT_RERANKER) >= 0
        self.download_reranker.setVisible(not installed)
        if self.reranker.count() == 1:
            self._reranker_note("No re-ranker installed: download one to turn re-ranking on.")

    def _reranker_note(self, text: str) -> None:
        self.reranker_status.setText(text)
        self.reranker_status.setVisible(bool(text))

    def _download_reranker(self) -> None:
        from searchain.index import download_reranker

        paths = self.ctx.paths
        self.download_reranker.setEnabled(False)
        self._reranker_note(f"Downloading {DEFAULT_RERANKER}…")

        def work(on_event, cancel):
            return download_reranker(paths, DEFAULT_RERANKER, on_event=on_event, cancel=cancel)

        def progress(event) -> None:
            total = getattr(event, "total", None)
            if total:
                self._reranker_note(f"Downloading {DEFAULT_RERANKER}: file "
                                    f"{min(event.done + 1, total)} of {total} ({event.message})")

        def done(_path) -> None:
            self.download_reranker.setEnabled(True)
            self._fill_rerankers(DEFAULT_RERANKER)
            self._reranker_note(f"{DEFAULT_RERANKER} is installed and chosen; OK or Apply turns "
                                "re-ranking on.")

        def failed(exc: BaseException) -> None:
            self.download_reranker.setEnabled(True)
            self._reranker_note(str(exc))

        self._download_job = self.runner.start("reranker-download", work, on_event=progress,
                                               on_done=done, on_error=failed)

    def show_gpu_support(self, supported: bool | None) -> None:
        self.gpu_support.setText({True: "GPU offload available in this build",
                                  False: "No GPU offload in this build: layers run on the CPU"}.get(
            supported, "GPU offload support unknown"))

    def _server_note(self) -> str:
        """Where answers come from when a server is chosen, and what its lack of grammars costs."""
        from searchain.llm import server_grammar_note, server_label

        llm = self.ctx.settings.llm
        if llm.backend != "openai":
            return ""
        return (f"Answers come from {server_label(llm.server_url, llm.server_model or 'its first model')} "
                "(Models > Use a server to change it; a GGUF file below answers instead). "
                + server_grammar_note(llm.server_grammar))

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", str(Path.home()), "GGUF (*.gguf)")
        if path:
            self.model_path.setText(path)

    def apply(self) -> None:
        llm, reasoning = self.ctx.settings.llm, self.ctx.settings.reasoning
        before = (llm.model_path, llm.n_gpu_layers, llm.n_ctx, llm.n_threads, reasoning.reader)
        llm.model_path = self.model_path.text().strip()
        if llm.model_path and llm.model_path != before[0]:
            llm.backend = "llama_cpp"  # a file was chosen here: it answers, not the server
        llm.n_gpu_layers = self.gpu_layers.value()
        llm.n_ctx = self.n_ctx.value()
        llm.n_threads = self.n_threads.value()
        llm.warm_up = self.warm_up.isChecked()
        self.reasoning_box.apply_to(reasoning)
        retrieval = self.ctx.settings.retrieval
        retrieval.retriever = self.retriever.currentData()
        retrieval.second_embedder = self.second_embedder.currentData() or ""
        retrieval.embed_precision = self.embed_precision.currentData()
        retrieval.embed_device = self.embed_device.currentData()
        retrieval.reranker = self.reranker.currentData() or ""
        retrieval.rerank_depth = self.rerank_depth.value()
        after = (llm.model_path, llm.n_gpu_layers, llm.n_ctx, llm.n_threads, reasoning.reader)
        self.server_note.setText(self._server_note())
        self.server_note.setVisible(llm.backend == "openai")
        self.applied.emit(before != after)

    def restore_defaults(self) -> None:
        """Every field back to its default except the model file, which is a choice of the user's
        rather than a preference; saved only by OK or Apply."""
        from searchain.config import Settings

        defaults = Settings()
        llm, reasoning, retrieval = defaults.llm, defaults.reasoning, defaults.retrieval
        for box, value in ((self.gpu_layers, llm.n_gpu_layers), (self.n_ctx, llm.n_ctx),
                           (self.n_threads, llm.n_threads), (self.rerank_depth, retrieval.rerank_depth)):
            box.setValue(value)
        self.warm_up.setChecked(llm.warm_up)
        self.reasoning_box.load(reasoning)
        for combo, value in ((self.retriever, retrieval.retriever), (self.reranker, retrieval.reranker),
                             (self.second_embedder, retrieval.second_embedder),
                             (self.embed_precision, retrieval.embed_precision),
                             (self.embed_device, retrieval.embed_device)):
            combo.setCurrentIndex(max(0, combo.findData(value)))

    def accept(self) -> None:
        self.apply()
        super().accept()

    def done(self, result: int) -> None:
        """Closing stops a download in flight (the folder is only kept when complete) and drops
        its callbacks, which would otherwise touch this closed dialog."""
        job = getattr(self, "_download_job", None)
        if job is not None and job.running:
            job.on_done = job.on_error = None
            job.cancel()
        super().done(result)


def _gpu_supported(_on_event, _cancel) -> bool:
    from searchain.llm import gpu_offload_supported

    return gpu_offload_supported()
