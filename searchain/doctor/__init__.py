"""Checking an installation: each finding with its fix (`searchain doctor`, Help > Check set-up)."""
