"""The house rules of the code, read from its imports (every import, module-level or inside a
function): no import circles, layers import downward only, the app enters the engine through the
packages' faces, and test stand-ins stay out of the engine. docs/architecture.md draws the same
layers; ``LAYERS`` below is the one place they are written down.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Bottom to top. Within a container, a child (subpackage or module) may import the children of
# lower rows only; children of the same row are peers and import neither each other. A module may
# always import inside its own child. Every child must be placed in a row.
LAYERS: dict[str, list[list[str]]] = {
    "searchain": [
        ["errors", "types", "units", "machine", "quiet", "metrics", "faces"],
        ["events", "settings_schema"],
        ["files", "settings_file"],
        ["config"],
        ["logs", "hub_folder"],
        ["corpus", "llm"],
        ["reader"],
        ["index", "reasoning"],
        ["store", "eval", "library"],
        ["workspace", "doctor"],
        ["cli", "bench"],
        ["__main__"],
    ],
    "searchain.index": [
        ["layout", "passages"],
        ["embed", "bm25"],
        ["ann"],
        ["status"],
        ["build", "dense", "cross_encoder"],
        ["hybrid"],
        ["mixed"],
        ["retrievers"],
        ["fakes"],
    ],
    "searchain.llm": [
        ["base", "events", "gpu"],
        ["models", "chat_templates"],
        ["chat_prompt"],
        ["model_kind"],
        ["llama", "server"],
        ["loader"],
        ["fakes"],
    ],
    "searchain.llm.llama": [
        ["llama_open", "sampling", "text_stream", "prefix_states", "speculation"],
        ["draft_model"],
        ["llama_cpp_backend"],
        ["isolated", "worker"],
    ],
    "searchain.llm.server": [
        ["openai_wire"],
        ["openai_backend"],
        ["server_probe"],
    ],
    "searchain.reasoning": [
        ["modes", "accounting", "inmemory", "polar"],
        ["result", "chain"],
        ["events", "duplicates"],
        ["parts"],
        ["loop", "tracing", "followup", "concise"],
        ["baselines", "strategies"],
        ["engine", "warmup"],
    ],
    "searchain.reasoning.loop": [
        ["draft_rules", "stepwise", "node_check"],
        ["run"],
    ],
    "searchain.doctor": [
        ["check"],
        ["data", "device", "isolation"],
        ["installation"],
        ["report"],
    ],
}
# Packages the engine must not import: test stand-ins. Tests, benchmarks and the CLI's
# ``models test-model`` may.
FAKES = ("searchain.llm.fakes", "searchain.index.fakes", "searchain.reader.fakes")
MAY_IMPORT_FAKES = ("searchain.bench", "searchain.cli", "searchain.llm.fakes", "searchain.index.fakes",
                    "searchain.reader.fakes")


def _modules() -> dict[str, Path]:
    mods = {}
    for base in ("searchain", "desktop"):
        for path in (REPO / base).rglob("*.py"):
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = path
    return mods


MODULES = _modules()


def _imports(module: str) -> list[tuple[str, int]]:
    """(imported module, line) for each import in ``module``; ``from pkg import name`` counts as an
    import of ``pkg.name`` where that is a module, else of ``pkg``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in MODULES else target, node.lineno))
    out = []
    for target, line in found:
        while target not in MODULES and "." in target:
            target = target.rpartition(".")[0]
        if target in MODULES and target != module:
            out.append((target, line))
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def find_circles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Every group of modules that import each other round a circle (Tarjan's strongly connected
    components of more than one module)."""
    index, low, stack, on_stack, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def _child(container: str, module: str) -> str | None:
    prefix = container + "."
    return module[len(prefix):].split(".")[0] if module.startswith(prefix) else None


def upward_imports(graph: dict[str, list[tuple[str, int]]], container: str) -> list[str]:
    """Imports inside ``container`` from a child to a child of the same or a higher row."""
    row_of = {name: i for i, row in enumerate(LAYERS[container]) for name in row}
    wrong = []
    for module, imports in graph.items():
        child = _child(container, module)
        if child is None:
            continue
        for target, line in imports:
            other = _child(container, target)
            if other is not None and other != child and row_of[other] >= row_of[child]:
                wrong.append(f"{module}:{line} imports {target} ({other} is not below {child})")
    return wrong


def test_no_import_circles():
    assert find_circles(GRAPH) == []


@pytest.mark.parametrize("container", sorted(LAYERS))
def test_every_child_has_a_layer(container):
    placed = {name for row in LAYERS[container] for name in row}
    children = {_child(container, m) for m in MODULES} - {None, "__init__"}
    assert sorted(children - placed) == [], f"place these in LAYERS[{container!r}]"
    assert sorted(placed - children) == [], f"LAYERS[{container!r}] names what is not there"


@pytest.mark.parametrize("container", sorted(LAYERS))
def test_layers_import_downward_only(container):
    assert upward_imports(GRAPH, container) == []


def test_a_new_circle_or_upward_import_is_found():
    """The checks would catch the kinds of defect this layout removed (doctor's check type
    imported back from the top; index/layout importing the build plan)."""
    graph = {m: list(imports) for m, imports in GRAPH.items()}
    graph["searchain.doctor.check"].append(("searchain.doctor.installation", 1))
    graph["searchain.index.layout"].append(("searchain.index.build.plan", 2))
    circles = find_circles(graph)
    assert any({"searchain.doctor.check", "searchain.doctor.installation"} <= set(c) for c in circles)
    assert any({"searchain.index.layout", "searchain.index.build.plan"} <= set(c) for c in circles)
    assert upward_imports(graph, "searchain.index") == [
        "searchain.index.layout:2 imports searchain.index.build.plan (build is not below layout)"]
    assert upward_imports(graph, "searchain.doctor") == [
        "searchain.doctor.check:1 imports searchain.doctor.installation (installation is not below check)"]


def test_the_engine_does_not_import_test_stand_ins():
    wrong = [f"{module}:{line} imports {target}" for module, imports in GRAPH.items()
             if module.startswith("searchain") and not module.startswith(MAY_IMPORT_FAKES)
             for target, line in imports if target.startswith(FAKES)]
    assert wrong == []


def _is_face(module: str) -> bool:
    """A top-level module of ``searchain``, or a top-level package's ``__init__``."""
    return module.count(".") == 1 and module.startswith("searchain.")


def test_the_app_enters_the_engine_through_package_faces():
    wrong = [f"{module}:{line} imports {target}" for module, imports in GRAPH.items()
             if module.startswith("desktop") for target, line in imports
             if target.startswith("searchain.") and not _is_face(target)]
    assert wrong == []


def test_the_engine_never_imports_qt():
    wrong = []
    for module, path in MODULES.items():
        if module.startswith("searchain"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                wrong += [f"{module} imports {n}" for n in names if n.split(".")[0] in ("PySide6", "desktop")]
    assert wrong == []


def test_each_face_names_what_it_offers_and_each_name_is_there():
    """A package face lists its names in ``__all__``, and each resolves (lazily) to a real object."""
    import importlib

    faces = [m for m, p in MODULES.items() if _is_face(m) and p.name == "__init__.py"]
    used_by_app = {t for m, imports in GRAPH.items() if m.startswith("desktop") for t, _ in imports}
    for face in faces:
        package = importlib.import_module(face)
        if face in used_by_app:
            assert getattr(package, "__all__", None), f"{face} is imported by the app but names nothing"
        for name in getattr(package, "__all__", ()):
            assert getattr(package, name) is not None, f"{face}.{name}"


def test_every_name_the_app_takes_from_the_engine_is_offered():
    """What ``desktop`` imports from a package face is in that face's ``__all__``: the app gets
    nothing by reaching past it, and a face that drops a name fails here, not in the app."""
    import importlib

    missing = []
    for module, path in MODULES.items():
        if not module.startswith("desktop"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module in MODULES \
                    and _is_face(node.module) and MODULES[node.module].name == "__init__.py":
                offered = set(getattr(importlib.import_module(node.module), "__all__", ()))
                missing += [f"{module}:{node.lineno} {node.module}.{a.name}" for a in node.names
                            if a.name not in offered]
    assert missing == []
