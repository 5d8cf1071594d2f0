"""The corpus manager and its parts: build plans, import and export."""
