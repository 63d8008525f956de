"""Builders of the data the benchmarks measure on: generated trees, corpora with known answers,
filled brains and seeded prose."""
