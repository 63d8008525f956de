"""What an LLM call is for. The ledger, the model table and the offline heuristics key on it."""

from enum import StrEnum


class Purpose(StrEnum):
    ROUTE = "route"  # choose among options (search router, tool choice)
    READ = "read"  # pull what matters for a query out of a text
    DESCRIBE = "describe"  # a short description of a node or file
    REFLECT = "reflect"  # a reflection tick over recent events
    DEEP_REFLECT = "deep_reflect"  # a slower, wider reflection
    DECIDE = "decide"  # pick an action or a yes/no
    CHAT = "chat"  # free conversation
    MEMORIZE = "memorize"  # patch the reasoning graph with new evidence
    RECALL = "recall"  # flush and fold the reasoning graph
    SUMMARIZE = "summarize"  # compress text to fit a budget
    ANSWER = "answer"  # answer a question from context
    EMBED = "embed"  # vectors of texts from the embeddings endpoint (memsite/llm/embeddings.py)


PURPOSES: tuple[str, ...] = tuple(purpose.value for purpose in Purpose)  # what the ledger holds
# What `complete` runs, each with a model of its own (MEMSITE_LLM_MODEL_<PURPOSE>): an embedding
# is no completion, and its model is MEMSITE_EMBEDDING_MODEL.
COMPLETION_PURPOSES: tuple[str, ...] = tuple(purpose for purpose in PURPOSES if purpose != Purpose.EMBED)
