"""SearChain Desktop: the PySide6 app. It drives ``searchain`` (the engine) and holds no engine logic."""
