"""The corpus manager and its parts: build plans, import and export; and the picker of the
corpora a chat searches (``chat_picker``)."""
