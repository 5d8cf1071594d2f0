"""Where the common local-LLM apps keep their GGUF models, on Linux, macOS and Windows.

Each function returns candidate folders; ``discovery`` walks the ones that exist. Every path is
built from the environment handed in (``HOME``, the XDG variables, ``%USERPROFILE%``,
``%LOCALAPPDATA%``, ``%APPDATA%`` and each app's own variable), never from the real machine, so a
test lays out a fake home and points ``HOME`` at it. All three systems' places are tried on every
system: a folder that does not exist costs one ``stat``, and it lets a test on Linux lay out a
macOS home.

What each app does, and what is read here (conservative: only files and keys the apps are known
to write; anything else is ignored, never guessed at):

- **LM Studio**: ``~/.lmstudio/models/<publisher>/<repo>/*.gguf`` (0.3+; ``%USERPROFILE%`` on
  Windows), older ``~/.cache/lm-studio/models``. A moved LM Studio home is named in
  ``~/.lmstudio-home-pointer``; a custom models folder is ``downloadsFolder`` in the home's
  ``settings.json``.
- **Ollama**: ``$OLLAMA_MODELS``, ``~/.ollama/models``, and ``/usr/share/ollama/.ollama/models``
  (the Linux service install's user); models are blobs named in ``manifests/`` (``discovery``).
- **GPT4All**: ``$XDG_DATA_HOME/nomic.ai/GPT4All`` (Linux), ``~/Library/Application
  Support/nomic.ai/GPT4All`` (macOS), ``%LOCALAPPDATA%\\nomic.ai\\GPT4All`` (Windows), and the
  ``modelPath`` of its settings (``GPT4All.ini``: ``$XDG_CONFIG_HOME/nomic.ai``, macOS
  ``~/.config/gpt4all.io``, ``%APPDATA%\\nomic.ai``). GPT4All reads only the folder's top level.
- **Jan**: the data folder ``<data>/Jan/data`` (``$XDG_DATA_HOME``, ``~/Library/Application
  Support``, ``%APPDATA%``; models in ``llamacpp/models/<id>/`` since 0.6, ``models/<id>/``
  before), the legacy ``~/jan/models``, and a moved data folder (``data_folder`` in Jan's
  ``settings.json``, in ``jan.ai.app/`` or ``Jan/`` beside the data folder, or ``~/.config/Jan``).
- **Hugging Face hub cache**: ``$HF_HUB_CACHE``, ``$HUGGINGFACE_HUB_CACHE``, ``$HF_HOME/hub``, and
  the default ``$XDG_CACHE_HOME/huggingface/hub``.
- **llama.cpp** (``-hf`` downloads): ``$LLAMA_CACHE``, ``$XDG_CACHE_HOME/llama.cpp``, macOS
  ``~/Library/Caches/llama.cpp``, ``%LOCALAPPDATA%\\llama.cpp``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

# Machine-wide stores (not under any user's home). Tests empty this to stay off the real machine.
SYSTEM_OLLAMA_DIRS: tuple[Path, ...] = (Path("/usr/share/ollama/.ollama/models"),)
MAC_SUPPORT = ("Library", "Application Support")


@dataclass(frozen=True)
class UserDirs:
    """The user's folders, from an environment mapping (``os.environ`` by default)."""

    env: Mapping[str, str]
    home: Path
    config: Path  # $XDG_CONFIG_HOME or ~/.config
    data: Path  # $XDG_DATA_HOME or ~/.local/share
    cache: Path  # $XDG_CACHE_HOME or ~/.cache
    local_appdata: Path | None  # Windows %LOCALAPPDATA%
    appdata: Path | None  # Windows %APPDATA% (roaming)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "UserDirs":
        env = os.environ if env is None else env
        home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home()).expanduser()

        def xdg(name: str, *default: str) -> Path:
            value = env.get(name, "")
            return Path(value) if value and Path(value).is_absolute() else home.joinpath(*default)

        def win(name: str) -> Path | None:
            value = env.get(name, "")
            return Path(value) if value else None

        return cls(env, home, xdg("XDG_CONFIG_HOME", ".config"),
                   xdg("XDG_DATA_HOME", ".local", "share"), xdg("XDG_CACHE_HOME", ".cache"),
                   win("LOCALAPPDATA"), win("APPDATA"))

    def var(self, name: str) -> Path | None:
        value = self.env.get(name, "")
        return Path(value).expanduser() if value else None

    @property
    def mac_support(self) -> Path:
        return self.home.joinpath(*MAC_SUPPORT)


def lmstudio_dirs(d: UserDirs) -> list[Path]:
    homes = [d.home / ".lmstudio"]
    pointer = _read_text(d.home / ".lmstudio-home-pointer")
    if pointer:
        homes.insert(0, Path(pointer.strip()).expanduser())
    found = []
    for home in homes:
        folder = _json_key(home / "settings.json", "downloadsFolder")
        if folder:
            found.append(Path(folder).expanduser())
        found.append(home / "models")
    return found + [d.home / ".cache" / "lm-studio" / "models"]


def ollama_dirs(d: UserDirs) -> list[Path]:
    found = [p for p in (d.var("OLLAMA_MODELS"),) if p]
    return found + [d.home / ".ollama" / "models", *SYSTEM_OLLAMA_DIRS]


def gpt4all_dirs(d: UserDirs) -> list[Path]:
    settings = [d.config / "nomic.ai" / "GPT4All.ini", d.home / ".config" / "gpt4all.io" / "GPT4All.ini"]
    defaults = [d.data / "nomic.ai" / "GPT4All", d.mac_support / "nomic.ai" / "GPT4All"]
    if d.appdata:
        settings.append(d.appdata / "nomic.ai" / "GPT4All.ini")
    if d.local_appdata:
        defaults.append(d.local_appdata / "nomic.ai" / "GPT4All")
    chosen = [Path(p).expanduser() for p in (_ini_value(s, "modelPath") for s in settings) if p]
    return chosen + defaults


def jan_dirs(d: UserDirs) -> list[Path]:
    bases = [d.data, d.mac_support] + ([d.appdata] if d.appdata else [])
    settings = [d.config / "Jan" / "settings.json"]
    settings += [base / name / "settings.json" for base in bases for name in ("jan.ai.app", "Jan")]
    data_folders = [Path(p).expanduser() for p in (_json_key(s, "data_folder") for s in settings) if p]
    data_folders += [base / "Jan" / "data" for base in bases]
    found = [folder / sub for folder in data_folders for sub in ("llamacpp/models", "models")]
    return found + [d.home / "jan" / "models"]


def hf_hub_dirs(d: UserDirs) -> list[Path]:
    found = [p for p in (d.var("HF_HUB_CACHE"), d.var("HUGGINGFACE_HUB_CACHE")) if p]
    if hf_home := d.var("HF_HOME"):
        found.append(hf_home / "hub")
    return found + [d.cache / "huggingface" / "hub"]


def llama_cpp_dirs(d: UserDirs) -> list[Path]:
    found = [p for p in (d.var("LLAMA_CACHE"),) if p]
    found += [d.cache / "llama.cpp", d.home / "Library" / "Caches" / "llama.cpp"]
    return found + ([d.local_appdata / "llama.cpp"] if d.local_appdata else [])


def _read_text(path: Path, limit: int = 1 << 20) -> str | None:
    """A small settings file's text; None when absent, unreadable or suspiciously large."""
    try:
        if path.stat().st_size > limit:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _json_key(path: Path, key: str) -> str | None:
    """A string at the top level of a JSON settings file; None for anything else."""
    text = _read_text(path)
    try:
        value = json.loads(text).get(key) if text else None
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value.strip() else None


def _ini_value(path: Path, key: str) -> str | None:
    """``key=value`` from the ``[General]`` section of a Qt settings (.ini) file. Read by hand:
    Qt's escapes and ``%`` signs upset ``configparser``."""
    text = _read_text(path)
    section = "General"
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "General" and line.partition("=")[0].strip() == key:
            value = line.partition("=")[2].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1].replace("\\\\", "\\")
            return value or None
    return None
