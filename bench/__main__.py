"""`make bench`: every benchmark in turn, each printing its table. One module a line."""
from bench import misordered, model_output, plan_sizes, run_jobs, run_overhead

run_overhead.main([])
run_jobs.main([])
plan_sizes.main([])
model_output.main([])
misordered.main([])
