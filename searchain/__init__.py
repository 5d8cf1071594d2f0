"""SearChain Desktop engine: offline Search-in-the-Chain question answering with cited passages.

The engine never imports Qt; the desktop app (``desktop/``) and the CLI (``searchain.cli``)
both drive it and consume the same typed events.
"""

__version__ = "0.1.0"
