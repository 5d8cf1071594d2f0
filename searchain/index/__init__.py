"""Retrieval over a corpus: embedding (``embed/``), the vector index (``ann/``), BM25
(``bm25/``), building it all (``build/``), and at the top the index's layout and status and the
retrievers (dense, BM25, hybrid, re-ranked) that ``retrievers.open_retriever`` hands out.
The names below are what the app uses."""

from ..faces import face

__all__, __getattr__, __dir__ = face(__name__, {
    "retrievers": ("open_retriever", "KeywordOnly"),
    "layout": ("OPEN_STAGE",),
    "status": ("listing_status", "index_status"),
    "cross_encoder": ("DEFAULT_RERANKER", "installed_rerankers", "download_reranker"),
    "embed.device": ("cuda_build",),
    "embed.precision": ("cpu_has_native_bf16",),
    "embed.packaged": ("PACKAGED_EMBEDDERS", "find_parts as find_packaged_parts",
                       "is_assembled as packaged_is_assembled"),
    "embed.second": ("AUTO as AUTO_SECOND_EMBEDDER", "auto_choice as auto_second_embedder"),
})
