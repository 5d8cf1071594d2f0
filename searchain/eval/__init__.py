"""Evaluation: datasets, metrics (cover-EM, token F1) and the eval runner."""
