"""Scripts that measure memsite, each printing a table; results land in benchmarks/results/.
The scripts are benchmarks/<name>.py; measures/ holds what they measure, kit/ what they share,
corpora/ the data they build, realdata/ the benchmark on public datasets."""
