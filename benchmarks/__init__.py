"""Scripts that measure memsite, each printing a table; results land in benchmarks/results/."""
