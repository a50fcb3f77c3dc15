"""Benchmarks: each prints its timings as ratios against a baseline measured in the same run."""
