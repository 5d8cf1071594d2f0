"""Benchmarks behind `searchain bench ...`: each prints one JSON object."""
