"""A text's content words: its words less the stop words, as roots (what ranking compares) or
light stems (what options and field names are matched by), and the most frequent of them.
Pure: no Django, no database. Explained in docs/text.md."""

import math
import re

from memsite.text.stems import root, stem

# English function words, and the words a prompt's instructions use ("please reply in JSON"),
# which say nothing of what a question or a text is about.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    please reply json return given use uses used using one also like get gets make makes""".split()
)
WORD = re.compile(r"\w+", re.UNICODE)


def content_words(text: str) -> list[str]:
    """The text's words, lower case and in order, less the stop words and single characters."""
    return [word for word in WORD.findall(text.lower()) if word not in STOPWORDS and len(word) > 1]


def roots(text: str) -> list[str]:
    """The roots of a text's content words, in order: what ranking compares."""
    return [root(word) for word in content_words(text)]


def words(text: str) -> list[tuple[str, str]]:
    """(stem, word) for each content word."""
    return [(stem(word), word) for word in content_words(text)]


def terms(text: str) -> list[str]:
    """The light stems of a text's content words, in order."""
    return [stem(word) for word in content_words(text)]


def overlap(query_terms: frozenset[str], text: str) -> float:
    """Shared terms, normalised by the text's length so a short precise option beats a long one
    that happens to mention everything."""
    text_terms = terms(text)
    if not text_terms or not query_terms:
        return 0.0
    shared = sum(1 for term in dict.fromkeys(text_terms) if term in query_terms)
    return shared / math.sqrt(len(set(text_terms)))


def frequent_words(text: str, count: int = 8) -> tuple[str, ...]:
    """The most frequent content words, as first written; ties keep the text's order."""
    counts: dict[str, int] = {}
    surface: dict[str, str] = {}
    for term, word in words(text):
        if len(word) > 2 and not word.isdigit():
            counts[term] = counts.get(term, 0) + 1
            surface.setdefault(term, word)
    order = {term: position for position, term in enumerate(counts)}
    ranked = sorted(counts, key=lambda term: (-counts[term], order[term]))
    return tuple(surface[term] for term in ranked[:count])
