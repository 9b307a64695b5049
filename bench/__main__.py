"""`make bench`: every benchmark in turn, each printing its table. One module a line.
model_output also measures the real histories of bench/releases.py (PyPI releases as commits)."""
from bench import absorb, langs, misordered, model_output, plan_sizes, releases, run_jobs, run_overhead

run_overhead.main([])
run_jobs.main([])
plan_sizes.main([])
model_output.main(releases.real_args())
misordered.main([])
langs.main([])
absorb.main([])
