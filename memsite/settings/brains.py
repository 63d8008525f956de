"""Agents' brains (seed 002): caps, memory.json imports, ticks and the fetch_url tool."""

from memsite.settings.env import env_int, env_int_map, env_list

# Agents' brains: caps of their collections over the defaults in agents/brains/logic/caps.py, as
# `thought=5000,log=10000`.
MEMSITE_BRAIN_CAPS = env_int_map("MEMSITE_BRAIN_CAPS")
# The largest memory.json (seed 002's file of a whole brain) an import accepts.
MEMSITE_BRAIN_IMPORT_MAX_BYTES = env_int("MEMSITE_BRAIN_IMPORT_MAX_BYTES", 50 * 1024 * 1024)
# Ticks of the reflection loop: a tick's lease on its brain expires after MEMSITE_TICK_LEASE_S,
# so a killed worker's brain ticks again; deepReflect runs every MEMSITE_TICK_DEEP_REFLECT_EVERY
# ticks; read_file and fetch_url show the LLM at most MEMSITE_TICK_READ_TOKENS of what they read.
MEMSITE_TICK_LEASE_S = env_int("MEMSITE_TICK_LEASE_S", 300, minimum=1)
MEMSITE_TICK_DEEP_REFLECT_EVERY = env_int("MEMSITE_TICK_DEEP_REFLECT_EVERY", 5, minimum=1)
MEMSITE_TICK_READ_TOKENS = env_int("MEMSITE_TICK_READ_TOKENS", 2_000, minimum=1)
# The shortest interval an agent may tick at, and so beat's period for ticks_start_due
# (memsite/settings/queue.py): a shorter interval would tick no faster, only queue ticks that wait.
MEMSITE_TICK_MIN_INTERVAL_S = env_int("MEMSITE_TICK_MIN_INTERVAL_S", 10, minimum=1)

# Agents' fetch_url (memsite/fetch.py) reaches only these hosts: `docs.example.org`, or
# `.example.org` for it and its subdomains, with `:8080` for a port other than 80 and 443.
# Empty, nothing can be fetched.
MEMSITE_FETCH_ALLOWED_HOSTS = env_list("MEMSITE_FETCH_ALLOWED_HOSTS", [])
MEMSITE_FETCH_MAX_BYTES = env_int("MEMSITE_FETCH_MAX_BYTES", 1_000_000)  # read of one response
MEMSITE_FETCH_MAX_REDIRECTS = env_int("MEMSITE_FETCH_MAX_REDIRECTS", 3)
MEMSITE_FETCH_TIMEOUT_S = env_int("MEMSITE_FETCH_TIMEOUT_S", 10)  # each hop, resolution to last byte
