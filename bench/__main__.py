"""Run every benchmark in turn and print their tables."""
from bench import run_overhead

run_overhead.main()
