"""Package faces: a package's ``__init__`` names what it offers, and each name is imported from
its module only when it is first used.

The app (and anyone outside a package) imports from the face, ``from searchain.index import
listing_status``, never from the module behind it, so modules can move inside a package without
breaking callers. Lazy, because most modules behind a face pull in torch, faiss or llama.cpp, and
the app must open its window before any of them loads. A package's ``__init__`` reads::

    from ..faces import face

    __all__, __getattr__, __dir__ = face(__name__, {
        "status": ("listing_status", "index_status"),
        "build.builder": ("build_index",),
        "embed.second": ("AUTO as AUTO_SECOND_EMBEDDER",),   # a clearer name at package level
    })

A name is looked up in its module on every access (a dict lookup once the module is loaded), so
a test that patches the module's attribute is seen through the face too.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def face(package: str, exports: dict[str, tuple[str, ...]]) -> tuple[list[str], Callable[[str], Any],
                                                                      Callable[[], list[str]]]:
    """``exports`` maps a module (relative to ``package``) to the names it offers, each either
    ``"name"`` or ``"name as public_name"``. Returns ``__all__``, ``__getattr__`` and ``__dir__``."""
    where: dict[str, tuple[str, str]] = {}
    for module, names in exports.items():
        for entry in names:
            name, _, public = entry.partition(" as ")
            public = public or name
            if public in where:
                raise ValueError(f"{package} exports {public!r} twice")
            where[public] = (f"{package}.{module}", name)

    def __getattr__(public: str) -> Any:
        if public not in where:
            raise AttributeError(f"module {package!r} has no attribute {public!r}")
        module, name = where[public]
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(where)

    return sorted(where), __getattr__, __dir__
