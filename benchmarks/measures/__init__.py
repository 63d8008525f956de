"""What each benchmark measures: benchmarks/<name>.py parses its arguments, sets Django up on a
scratch database, then imports measures/<name>.py and runs it; the rest here are their parts."""
