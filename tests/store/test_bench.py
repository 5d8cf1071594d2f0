"""``searchain bench store`` runs end to end and prints one JSON object with every figure."""

import json

from searchain.cli.main import main


def test_bench_store_prints_figures_and_baselines(home, capsys):
    code = main(["--home", str(home.data_dir.parent), "bench", "store", "--json",
                 "--conversations", "40", "--long-messages", "20", "--repeats", "3"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["conversations"] == 41 and out["messages"] == 40 * 2 + 20
    for key in ("save_message_p50_ms", "save_message_naive_p50_ms", "save_message_floor_p50_ms",
                "open_conversation_1000_messages_ms", "open_conversation_n_plus_1_ms",
                "list_10000_conversations_ms", "list_10000_conversations_no_index_ms",
                "search_ms", "search_like_scan_ms"):
        assert out[key] > 0, key
    assert set(out["meets_targets"]) == set(out["targets_ms"])
