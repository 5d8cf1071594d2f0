"""The model dialog's *Use a server* tab: answers from a model another program serves (Ollama,
LM Studio, llama.cpp's llama-server, vLLM) over an OpenAI-compatible API.

The user types the URL (or picks a preset at the program's default local port), an optional key,
and a model from the ones the server lists (``GET /v1/models``). *Test connection* asks the server
what works (``searchain.llm.probe_server``: chat, streaming, grammar and JSON-schema constraints,
log-probabilities) and says what SearChain loses without each. Every request runs in a background
job, never on the UI thread, and goes only to the URL in the box. *Use this server* saves
``llm.backend = openai`` with the URL, model, key, the family and whether grammars are honoured,
and emits ``server_chosen(label)``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ...render import describe_error

# (button, URL, llm.server_family): each program's default local address.
PRESETS = (("Ollama", "http://127.0.0.1:11434/v1", "ollama"),
           ("LM Studio", "http://127.0.0.1:1234/v1", "lmstudio"),
           ("llama-server", "http://127.0.0.1:8080/v1", "llama.cpp"))
LIST_TIMEOUT = 15.0  # seconds: listing is quick on any live server


class ServerPanel(QWidget):
    server_chosen = Signal(str)  # "model @ host:port"
    models_listed = Signal(int)  # how many (-1: the listing failed)
    probe_finished = Signal(bool)  # whether chat works

    def __init__(self, ctx, runner, parent: QWidget | None = None):
        super().__init__(parent)
        self.ctx, self.runner = ctx, runner
        llm = ctx.settings.llm
        self.family = llm.server_family if llm.server_url else "auto"
        self.report = None  # the last ServerReport, for the URL and model it was made for
        self.jobs: dict[str, object] = {}
        presets = QHBoxLayout()
        presets.addWidget(QLabel("Presets:", self))
        for label, url, family in PRESETS:
            button = QPushButton(label, self)
            button.setObjectName(f"preset_{family}")
            button.setToolTip(f"{label} at its default address, {url}")
            button.clicked.connect(lambda _=False, u=url, f=family: self.use_preset(u, f))
            presets.addWidget(button)
        presets.addStretch(1)
        self.url = QLineEdit(llm.server_url, self)
        self.url.setObjectName("serverUrl")
        self.url.setPlaceholderText("http://127.0.0.1:11434/v1")
        self.url.textEdited.connect(self._url_edited)
        self.key = QLineEdit(llm.server_key, self)
        self.key.setObjectName("serverKey")
        self.key.setEchoMode(QLineEdit.EchoMode.Password)  # never shown on screen
        self.key.setPlaceholderText("optional: only servers started with a key need one")
        self.models = QComboBox(self)
        self.models.setObjectName("serverModels")
        self.models.setEditable(True)  # a server that lists nothing can still be named
        if llm.server_model:
            self.models.addItem(llm.server_model)
        self.list_button = QPushButton("List models", self)
        self.list_button.setObjectName("listServerModels")
        self.list_button.clicked.connect(self.list_models)
        model_row = QHBoxLayout()
        model_row.addWidget(self.models, 1)
        model_row.addWidget(self.list_button)
        self.test_button = QPushButton("Test connection", self)
        self.test_button.setObjectName("testConnection")
        self.test_button.clicked.connect(self.test_connection)
        self.use_button = QPushButton("Use this server", self)
        self.use_button.setObjectName("useServer")
        self.use_button.clicked.connect(self.use_server)
        self.result = QLabel("Answers can come from a model another program serves. Only the "
                             "address in the box is contacted.", self)
        self.result.setObjectName("serverReport")
        self.result.setTextFormat(Qt.TextFormat.PlainText)  # server replies are quoted in errors
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form = QFormLayout()
        form.addRow("Server URL:", self.url)
        form.addRow("API key:", self.key)
        form.addRow("Model:", model_row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.test_button)
        buttons.addWidget(self.use_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(presets)
        layout.addLayout(form)
        layout.addLayout(buttons)
        scroll = QScrollArea(self)  # the report and what is lost can outgrow the tab
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.result.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        scroll.setWidget(self.result)
        layout.addWidget(scroll, 1)

    # -- the user's choices -----------------------------------------------------------------

    def use_preset(self, url: str, family: str) -> None:
        """Fill in a program's default address and list what it serves."""
        self.url.setText(url)
        self._url_edited()
        self.family = family
        self.list_models()

    def _url_edited(self, _text: str = "") -> None:
        self.family, self.report = "auto", None  # another server: its family is found again

    def _address(self) -> tuple[str, str, str]:
        return self.url.text().strip(), self.key.text().strip(), self.models.currentText().strip()

    # -- background jobs (the UI thread never waits on the network) --------------------------

    def list_models(self):
        url, key, _model = self._address()
        if not url:
            self.result.setText("Type the server's URL first, or pick a preset.")
            return None

        def work(_on_event, _cancel):
            from searchain.llm import list_server_models

            return list_server_models(url, api_key=key, timeout=LIST_TIMEOUT)

        self.result.setText(f"Asking {url} for its models…")
        return self._start("list", work, self._listed, lambda exc: self._failed(exc, self.models_listed, -1))

    def test_connection(self):
        url, key, model = self._address()
        if not url:
            self.result.setText("Type the server's URL first, or pick a preset.")
            return None
        family, timeout = self.family, self.ctx.settings.llm.server_timeout

        def work(_on_event, cancel):
            from searchain.llm import probe_server

            return probe_server(url, model=model or None, api_key=key, timeout=timeout,
                                family=family, cancel=cancel)

        self.test_button.setEnabled(False)
        self.result.setText(f"Testing {url}: chat, streaming, grammars, log-probabilities…")
        return self._start("probe", work, self._tested, lambda exc: self._failed(exc, self.probe_finished, False))

    def _start(self, kind: str, work, done, failed):
        if self.jobs.get(kind) is not None:
            self.jobs[kind].cancel()  # a newer request replaces it
        job = self.runner.start(f"server-{kind}", work,
                                on_done=lambda value: self._ended(kind, job) and done(value),
                                on_error=lambda exc: self._ended(kind, job) and failed(exc),
                                on_cancelled=lambda: self._ended(kind, job))
        self.jobs[kind] = job
        return job

    def _ended(self, kind: str, job) -> bool:
        """True when the job's outcome is still wanted (the panel open, no newer job)."""
        if not _alive(self) or self.jobs.get(kind) is not job:
            return False
        self.jobs[kind] = None
        self.test_button.setEnabled(True)
        return True

    def _listed(self, names: list[str]) -> None:
        current = self.models.currentText().strip()
        self.models.clear()
        self.models.addItems(names)
        if current in names:
            self.models.setCurrentText(current)
        self.result.setText(f"The server lists {len(names)} model{'s' if len(names) != 1 else ''}."
                            + (" Pick one, then test the connection." if names else
                               " Load a model in it first, or type the model's name."))
        self.models_listed.emit(len(names))

    def _tested(self, report) -> None:
        self.report = report
        self.family = report.family
        if report.models and self.models.count() == 0:
            self.models.addItems(list(report.models))
        self.models.setCurrentText(report.model)
        lines = report.lines()
        lost = report.lost()
        if lost:
            lines += ["", "What SearChain does without what is missing:"] + [f"• {x}" for x in lost]
        self.result.setText("\n".join(lines))
        self.probe_finished.emit(report.works("chat"))

    def _failed(self, exc: BaseException, signal, value) -> None:
        message, hint = describe_error(exc)
        self.result.setText(f"{message}\n{hint}".strip())
        signal.emit(value)

    def cancel(self) -> None:
        for job in self.jobs.values():
            if job is not None:
                job.cancel()

    # -- choosing ---------------------------------------------------------------------------

    def use_server(self) -> bool:
        """Save this server as where answers come from (nothing is contacted here)."""
        from searchain.llm import server_label

        url, key, model = self._address()
        if not url:
            self.result.setText("Type the server's URL first, or pick a preset.")
            return False
        tested = self.report if self.report is not None and self.report.model == (model or self.report.model) \
            else None
        llm = self.ctx.settings.llm
        llm.backend, llm.server_url, llm.server_key = "openai", url, key
        llm.server_model = model or (tested.model if tested else "")
        llm.server_family = tested.family if tested else self.family
        llm.server_grammar = tested.grammar_setting if tested else "auto"
        self.server_chosen.emit(server_label(url, llm.server_model or "the server's first model"))
        return True


def _alive(widget: QWidget) -> bool:
    from shiboken6 import isValid

    return isValid(widget)
