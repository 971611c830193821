"""Benchmarks: ``python -m benchmarks [name...]`` runs them (all by default)."""
