"""Readers: extract the answer span for a query from a passage, with a confidence. SearChain's IR
side reads with the DPR reader when one is installed (``dpr``), else with the loaded chat model
(``llm_reader``); ``loader.load_reader`` picks per the settings."""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "base": ("Reader", "ReaderResult"),
    "loader": ("load_reader", "dpr_reader_available"),
})
