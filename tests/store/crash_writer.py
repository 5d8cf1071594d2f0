"""Child process for the crash test: writes chats forever, reporting each durable write.

Usage: python -m tests.store.crash_writer DB_PATH. Each stdout line is printed only after the
write it reports has returned (so it is committed): ``committed ID``, ``finished ID``,
``checkpoint ID LENGTH``. The test SIGKILLs this process at an arbitrary moment.
"""

import sys
import time

from searchain.store import ConversationStore, RunInfo
from tests.fixtures.store import build_sample_result


def answer_text(round_no: int) -> str:
    """The deterministic text answer ``round_no`` streams, token by token."""
    return "".join(f"tok{round_no}-{t} " for t in range(200))


def main(path: str) -> None:
    store = ConversationStore.open(path, checkpoint_interval=0.01)
    cid = store.create_conversation("crash test")
    run = RunInfo(model="m.gguf", corpus="musique", reader="dpr", mode="searchain")
    round_no = 0
    while True:
        qid = store.add_user_message(cid, f"question {round_no}")
        print("committed", qid, flush=True)
        aid = store.begin_answer(cid, run)
        print("committed", aid, flush=True)
        text = answer_text(round_no)
        cut = 0
        while cut < len(text):
            cut = text.index(" ", cut) + 1
            if store.checkpoint_answer(aid, text[:cut]):
                print("checkpoint", aid, cut, flush=True)
            time.sleep(0.001)  # a token every millisecond or so, like a fast local model
        if round_no % 2 == 0:
            store.finish_answer(aid, build_sample_result())
            print("finished", aid, flush=True)
        else:
            store.cancel_answer(aid)
            print("cancelled", aid, flush=True)
        round_no += 1


if __name__ == "__main__":
    main(sys.argv[1])
