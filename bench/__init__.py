"""Benchmarks (`make bench`): ratios against a yardstick measured in the same run."""
