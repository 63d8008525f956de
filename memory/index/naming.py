"""What a question names (pure): the names it says, which pick the passages it is about, and
the rest of the question, which ranks those passages by meaning.
Explained in docs/memory.md."""

import re
from collections.abc import Collection

from memsite.text.words import STOPWORDS

WORD = re.compile(r"[^\W\d_][\w-]*")
SENTENCE_END = ".?!:;\n"


def _begins_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \t\"'“‘(*-")
    return not before or before[-1] in SENTENCE_END


def names(query: str) -> list[str]:
    """The capitalised words that do not begin a sentence ("Elif", "Porto", "API"), lower-cased,
    in order, once each. A capitalised word at a sentence's start ("What", "Describe") names
    nothing for sure, so it is left to the other rankings."""
    found = [
        match[0].lower()
        for match in WORD.finditer(query)
        if match[0][0].isupper() and not _begins_sentence(query, match.start())
    ]
    return list(dict.fromkeys(word for word in found if len(word) > 1 and word not in STOPWORDS))


def without(query: str, words: Collection[str]) -> str:
    """The query with these words (any case, with a possessive 's) taken out."""
    if not words:
        return query
    alternatives = "|".join(map(re.escape, words))
    pattern = re.compile(rf"\b(?:{alternatives})(?:['’]s)?\b", re.IGNORECASE)
    return " ".join(pattern.sub(" ", query).split())


def outermost(paths: list[str]) -> list[str]:
    """Of these sorted tree paths, those with no ancestor among them."""
    kept: list[str] = []
    for path in paths:
        if not kept or not path.startswith(kept[-1]):
            kept.append(path)
    return kept
