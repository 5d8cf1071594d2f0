"""``searchain bench keyword-build`` and ``keyword-update``: the tantivy keyword index's build
and its update after a corpus update."""
