"""Run every benchmark in turn and print their tables."""
from bench import plan_sizes, run_overhead

run_overhead.main()
plan_sizes.main([])
