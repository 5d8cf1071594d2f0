"""Entry script for the PyInstaller bundle (the installed package uses ``desktop.app:main``)."""

import multiprocessing
import sys

if __name__ == "__main__":
    # A process of the bundle started by multiprocessing (the fork server of the ingest's parsing
    # workers, searchain/corpus/processes.py; or a spawned worker, and the resource tracker: each
    # is run by PyInstaller's multiprocessing hook here) does its task and exits instead of
    # starting the app again.
    multiprocessing.freeze_support()

if __name__ == "__main__" and sys.argv[1:2] == ["--searchain-llm-worker"]:
    # The model worker process (searchain/llm/llama/isolated.py): a bundle has no `python -m`.
    from searchain.llm.llama.worker import main as worker_main

    sys.exit(worker_main(sys.argv[2:]))

from desktop.app import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
