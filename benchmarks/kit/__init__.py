"""What the benchmarks share: the scratch database and the servers (harness, liveserver), HTTP
clients and hostile payloads, timers and meters, the offline LLM server and the search oracle."""
