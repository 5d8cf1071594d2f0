"""What every view shares: where files live, the settings, and the engine, opened lazily.

The engine (``searchain.workspace.Workspace``) is imported and created on first use, never at
start-up, so the window appears before torch or llama.cpp are loaded. Creation is guarded by a
lock because the first caller is usually a worker thread.
"""

from __future__ import annotations

import threading
from typing import Any

from searchain.config import AppPaths, Settings


class AppContext:
    def __init__(self, paths: AppPaths, settings: Settings):
        self.paths = paths
        self.settings = settings
        self._workspace: Any = None
        self._lock = threading.Lock()

    def save_settings(self) -> None:
        self.settings.save(self.paths)

    def workspace(self) -> Any:
        """The engine's ``Workspace`` (created on first call; safe from any thread)."""
        with self._lock:
            if self._workspace is None:
                from searchain.workspace import Workspace  # heavy deps load lazily inside it

                self._workspace = Workspace(self.paths, self.settings)
            return self._workspace

    @property
    def workspace_opened(self) -> bool:
        return self._workspace is not None

    def settings_changed(self, model_changed: bool = True) -> None:
        """Persist the settings; the engine drops what depends on them (retrievers, and with
        ``model_changed`` the model and reader, closed and loaded afresh by the next worker that
        needs them: ``Workspace.replace_llm``). Returns at once, safe while a question is answered.

        The engine shares this very ``Settings`` object, so new values apply to the next question.
        """
        self.save_settings()
        with self._lock:
            workspace = self._workspace
        if workspace is None:
            return
        if model_changed:
            workspace.replace_llm()
        workspace.forget_retriever()

    def close(self) -> None:
        with self._lock:
            workspace, self._workspace = self._workspace, None
        if workspace is not None and hasattr(workspace, "close"):
            workspace.close()
