"""`make bench`: every benchmark in turn, each printing its table. One module a line.
model_output also measures the real histories of bench/releases.py (PyPI releases as commits).
A real model (bench/local_model.py) is `make bench-local`: it builds a server and fetches weights."""
from bench import (
    absorb,
    judgement,
    langs,
    misordered,
    model_output,
    owners,
    plan_sizes,
    releases,
    run_jobs,
    run_overhead,
    sandbox_overhead,
    truth,
)

run_overhead.main([])
run_jobs.main([])
plan_sizes.main([])
model_output.main(releases.real_args())
misordered.main([])
judgement.main([])
langs.main([])
absorb.main([])
sandbox_overhead.main([])
owners.main([])
truth.main([])
