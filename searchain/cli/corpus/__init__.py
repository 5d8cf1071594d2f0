"""``searchain corpus ...``: the command (``command``) and its larger subcommands: ``get``
(Wikipedia in one step), ``update``, ``transfer`` (export and import), ``ray_build`` (an index
built on a Ray cluster)."""
