"""Command-line interface: `searchain ...`."""
