"""Generated prose for the conversations, brains and reasoning graphs of the benchmarks: seeded
sentences of working vocabulary, now and then a number or a code name."""

from __future__ import annotations

import random

WORDS = """
agent memory search node folder tree context window token budget summary plan goal step fact
episode thought reply model prompt tool result query index table row column cache worker queue
task retry timeout latency throughput request response server client database replica shard
partition migration schema field value record user session checkpoint snapshot branch path router
score rank match filter sort limit offset page cursor batch stream event signal incident alert
deploy release build test metric graph trace log error warning owner team service region cluster
the the the a a an of of to to in in on for with from by at as is is are was were be been has
have had will would can could should may might must not no and and or but if then when while
because so this that these those it its they them their we our you your which who what where why
how all any each every some many more most less few first last next previous new old large small
fast slow high low early late open closed ready done failed pending running read write append
delete update create move copy merge split join group count measure check verify compare report
explain describe answer ask find store load save send receive parse
""".split()
IDENTIFIERS = (
    "node_move",
    "search_start",
    "message_append",
    "agents_message",
    "history_offset",
    "p95_ms",
    "retry_after",
    "max_tokens",
    "tick_run",
    "celery.worker",
    "pg_stat_statements",
    "GET /api/nodes/",
)


def prose(rng: random.Random, words: int) -> str:
    """`words` words of sentences, now and then a number or a code name."""
    sentences, left = [], max(1, words)
    while left > 0:
        length = min(left, rng.randint(6, 18))
        left -= length
        sentence = rng.choices(WORDS, k=length)
        if rng.random() < 0.3:
            sentence[rng.randrange(length)] = str(rng.randint(2, 99_999))
        if rng.random() < 0.15:
            sentence[rng.randrange(length)] = f"`{rng.choice(IDENTIFIERS)}`"
        sentences.append(sentence[0].capitalize() + " " + " ".join(sentence[1:]) + rng.choice(".....?!"))
    return " ".join(sentence.strip() for sentence in sentences)
