"""The build plan: what an index build will cost, measured and said before it starts."""

import json
from dataclasses import replace

import pytest

from searchain.config import Settings
from searchain.index.build import plan as plan_mod
from searchain.index.build.plan import NEEDS_CONFIRMATION_S, BuildPlan, ModelPlan, SpeedCache, plan_build
from searchain.index.embed.second import auto_choice, auto_passage_limit, second_embedder_name

MINI = "mini"


def no_second(settings=None):
    s = settings or Settings()
    return replace(s, retrieval=replace(s.retrieval, second_embedder=""))


def test_an_up_to_date_index_plans_nothing(indexed_copy, embedder):
    plan = plan_build(indexed_copy, no_second(), MINI, embedder=embedder)
    (first,) = plan.models
    assert (plan.corpus, plan.passages, first.passages, first.role) == (MINI, 20, 0, "first")
    assert first.est_seconds == 0 and not plan.needs_confirmation
    assert "up to date" in plan.summary()


def test_a_rebuild_plans_every_passage_from_a_measured_speed(indexed_copy, embedder):
    events = []
    plan = plan_build(indexed_copy, no_second(), MINI, rebuild=True, embedder=embedder,
                      on_event=events.append)
    (first,) = plan.models
    assert first.passages == 20 and first.passages_per_s > 0 and first.calibrated == "now"
    assert first.est_seconds == pytest.approx(20 / first.passages_per_s, rel=0.01)
    assert (first.device, first.precision) == (embedder.effective_device, embedder.effective_precision)
    # Disk: 20 float32 vectors + ids as checkpoints, plus the graph; memory: graph + model.
    assert plan.disk_bytes >= 20 * (4 * 384 + 8) and plan.ram_bytes > plan.disk_bytes
    assert any("measuring" in e.message for e in events)
    # The last progress line is not the plan's headline, which the caller shows next (once).
    headline = plan.summary().splitlines()[0]
    assert events[-1].done == events[-1].total == 1 and headline not in [e.message for e in events]
    # The measured speed is cached per model, device, precision, batch and machine: the next
    # plan on this machine measures nothing.
    cache = json.loads((indexed_copy.cache_dir / plan_mod.CACHE_FILE).read_text())
    (key,) = cache
    assert key.startswith(embedder.model_id + "|cpu|") and cache[key]["passages_per_s"] > 0
    again = plan_build(indexed_copy, no_second(), MINI, rebuild=True, embedder=embedder)
    assert again.models[0].calibrated == "cached"


def test_a_slow_machine_is_told_to_confirm_and_what_would_help(indexed_copy, embedder):
    slow = {"passages_per_s": 0.001, "chars": 80.0}
    cache = SpeedCache(indexed_copy.cache_dir / plan_mod.CACHE_FILE)
    cache.put(plan_mod._speed_key(embedder), slow)
    plan = plan_build(indexed_copy, no_second(), MINI, rebuild=True, embedder=embedder)
    assert plan.est_seconds > NEEDS_CONFIRMATION_S and plan.needs_confirmation
    assert any("GPU" in a for a in plan.advice)
    data = plan.to_dict()
    assert data["needs_confirmation"] is True and data["models"][0]["name"] == embedder.model_id
    assert set(data) >= {"passages", "models", "disk_bytes", "ram_bytes", "est_seconds"}


def test_a_real_build_keeps_its_measured_speed_for_the_next_plan(home, embedder):
    plan_mod.record_speed(home, embedder, 100, 1.0, 8000)  # too short to say much: ignored
    cache = SpeedCache(home.cache_dir / plan_mod.CACHE_FILE)
    assert cache.get(plan_mod._speed_key(embedder)) is None
    plan_mod.record_speed(home, embedder, 1000, 10.0, 80_000)
    entry = cache.get(plan_mod._speed_key(embedder))
    assert entry["passages_per_s"] == 100.0 and entry["chars"] == 80.0 and entry["source"] == "build"


def test_a_damaged_speed_cache_is_measured_again(indexed_copy, embedder):
    (indexed_copy.cache_dir / plan_mod.CACHE_FILE).write_text("{not json")
    plan = plan_build(indexed_copy, no_second(), MINI, rebuild=True, embedder=embedder)
    assert plan.models[0].calibrated == "now"


def test_plan_arithmetic():
    m = ModelPlan("a", "first", "cpu", "fp32", 3600, 2.0, 1800.0, "now")
    s = ModelPlan("b", "second", "cpu", "fp32", 3600, 1.0, 3600.0, "now")
    plan = BuildPlan("c", 3600, (m, s), 60.0, 10, 20)
    assert plan.est_seconds == 5460.0 and plan.needs_confirmation
    assert "about 1 h 31 min" in plan.summary()


def test_auto_second_model_never_plans_a_long_embedding(monkeypatch, tmp_path):
    from searchain.index.embed import packaged
    from searchain.index.embed import precision

    monkeypatch.delenv("SEARCHAIN_AUTO_SECOND_EMBEDDER", raising=False)
    monkeypatch.setattr(packaged, "find_parts", lambda spec: tmp_path)  # "installed"
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: True)
    r = Settings().retrieval
    limit = auto_passage_limit("cpu")
    assert 8_000 <= limit <= 20_000  # the eval pools (3-5k) and the demo keep the fusion
    assert second_embedder_name(r, tmp_path, passages=limit) == "all-mpnet-base-v2"
    big = auto_choice(r, tmp_path, passages=21_000_000)
    assert big.model == "" and "21,000,000 passages" in big.reason and "choose it explicitly" in big.reason
    # Size-agnostic callers (the shared embedder) still see the model; an explicit name always wins.
    assert second_embedder_name(r, tmp_path) == "all-mpnet-base-v2"
    explicit = replace(r, second_embedder="all-mpnet-base-v2")
    assert second_embedder_name(explicit, tmp_path, passages=21_000_000) == "all-mpnet-base-v2"
    assert auto_passage_limit("cuda") > 100 * limit


@pytest.mark.slow
def test_cli_plan_prints_json_and_a_long_build_needs_yes(indexed_copy, embedder, capsys, monkeypatch):
    from searchain.cli.main import main

    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["corpus", "index", MINI, "--rebuild", "--plan", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["corpus"] == MINI and data["models"][0]["passages"] == 20
    # Make this machine look very slow: an unattended build must not start without --yes.
    cache = SpeedCache(indexed_copy.cache_dir / plan_mod.CACHE_FILE)
    for key, entry in json.loads(cache.path.read_text()).items():
        cache.put(key, {**entry, "passages_per_s": 0.001})
    before = (indexed_copy.corpora_dir / MINI / "index" / "meta.json").read_text()
    assert main(["corpus", "index", MINI, "--rebuild"]) != 0
    err = capsys.readouterr().err
    assert "Refusing without confirmation" in err and "--yes" in err
    assert (indexed_copy.corpora_dir / MINI / "index" / "meta.json").read_text() == before


def test_codes_made_before_the_refining_tier_are_reported_and_planned_as_retrained(
        indexed_copy, embedder, monkeypatch):
    from searchain.corpus.manager import CorpusManager
    from searchain.index.status import READY, STALE, index_status

    monkeypatch.setattr(plan_mod, "GRAPH_INSERTS_PER_CORE_S", 1.0)  # visible after rounding
    meta_file = CorpusManager(indexed_copy, Settings()).corpus_dir(MINI) / "index" / "meta.json"
    assert index_status(indexed_copy, MINI, embedder_id=embedder.model_id).state == READY
    assert plan_build(indexed_copy, no_second(), MINI, embedder=embedder).graph_seconds == 0
    # The same index as an earlier version wrote it: IVF codes without the refining tier.
    meta = json.loads(meta_file.read_text())
    meta_file.write_text(json.dumps({**meta, "spec": "IVF256,PQ8x4fs"}))
    status = index_status(indexed_copy, MINI, embedder_id=embedder.model_id)
    assert status.state == STALE and status.usable
    assert "refining tier" in status.message and "re-embedding nothing" in status.message
    assert f"corpus index {MINI}" in status.hint
    plan = plan_build(indexed_copy, no_second(), MINI, embedder=embedder)
    assert plan.models[0].passages == 0  # nothing to embed ...
    assert plan.graph_seconds == pytest.approx(20 / plan_mod.os.cpu_count(), abs=0.1)  # ... all recoded


def test_new_passages_plan_growing_the_codes_unless_they_cannot_grow_in_memory_here(
        indexed_copy, embedder, tmp_path, monkeypatch):
    from searchain.corpus.manager import CorpusManager
    from searchain.index.ann import compact
    from tests.fixtures.index import write_mini_corpus

    monkeypatch.setattr(plan_mod, "GRAPH_INSERTS_PER_CORE_S", 1.0)  # visible after rounding
    source = write_mini_corpus(tmp_path / "more.jsonl", [("Kyoto", "Kyoto was the imperial capital.")], "new")
    CorpusManager(indexed_copy, Settings()).add(MINI, source, "jsonl")
    per_core = 1 / plan_mod.os.cpu_count()
    grow = plan_build(indexed_copy, no_second(), MINI, embedder=embedder)
    assert grow.models[0].passages == 1 and grow.graph_seconds == pytest.approx(per_core, abs=0.1)
    monkeypatch.setattr(compact, "extension_fits", lambda count, dim, limit: False)
    fresh = plan_build(indexed_copy, no_second(), MINI, embedder=embedder)
    assert fresh.graph_seconds == pytest.approx(21 * per_core, abs=0.1)  # every vector, trained afresh


def test_a_large_corpus_plans_its_keyword_index_and_only_what_an_extension_adds(indexed_copy, embedder,
                                                                                  monkeypatch):
    """From ``TANTIVY_FROM_PASSAGES`` a build also makes the tantivy keyword index: the plan
    counts it (time and disk) until it is current, then only the passages an extension adds."""
    from searchain.corpus.manager import CorpusManager
    from searchain.index.bm25 import tantivy_index as tv
    from searchain.index.bm25.tantivy_schema import DISK_BYTES_PER_PASSAGE
    from searchain.types import Passage

    monkeypatch.setattr(tv, "TANTIVY_FROM_PASSAGES", 10)
    monkeypatch.setattr("searchain.index.bm25.tantivy_schema.PASSAGES_PER_THREAD_S", 0.01)
    settings = no_second()
    plan = plan_build(indexed_copy, settings, MINI, embedder=embedder)
    assert plan.keyword_seconds > 60 and plan.est_seconds >= plan.keyword_seconds
    assert plan.disk_bytes >= 20 * DISK_BYTES_PER_PASSAGE
    assert "keyword index (tantivy)" in plan.summary() and "up to date" not in plan.summary()
    with CorpusManager(indexed_copy, settings).open_store(MINI) as store:
        tv.ensure_current(store, settings.retrieval.bm25_title_weight)
    assert plan_build(indexed_copy, settings, MINI, embedder=embedder).keyword_seconds == 0
    with CorpusManager(indexed_copy, settings).open_store(MINI) as store:
        store.add([Passage(MINI, "new1", "Quokka", "a quokka"), Passage(MINI, "new2", "Numbat", "a numbat")])
    extend = plan_build(indexed_copy, settings, MINI, embedder=embedder).keyword_seconds
    assert 0 < extend == pytest.approx(plan.keyword_seconds * 2 / 20, rel=0.05)
