"""Benchmarks: `saz bench ...`, the figures of docs/BENCHMARKS.md."""
