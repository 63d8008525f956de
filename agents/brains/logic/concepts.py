"""The concepts a thought adds to the brain: its most frequent content words, each named by the
word as the thought wrote it (the form it used most of those sharing a stem), never by a stem.
Paths and URLs are left out: what the tick perceived has a neuron named by its path already.
Explained in docs/ticks.md."""

import re

from memsite.text.stems import root

MAX_CONCEPTS = 3  # concept neurons one thought adds
CONCEPT_MIN_CHARS = 4

# The English stop words of the Snowball project (as NLTK ships them), with the pieces its
# contractions leave once split at the apostrophe, and the indefinite pronouns.
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom this
    that these those am is are was were be been being have has had having do does did doing
    would should could ought might must shall will can a an the and but if or because as until
    while of at by for with about against between into through during before after above below to
    from up down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too very
    just now also yet ever even still ain aren couldn didn doesn hadn hasn haven isn mightn mustn
    needn shan shouldn wasn weren won wouldn don nothing something anything everything""".split()
)
# Words about the act of reflecting, or of pursuing a goal, rather than what it is about: a
# thought's frame. The offline reflection frames its thoughts with these and stop words alone,
# so that its concepts come from what it met and recalled.
REFLECTION_WORDS = frozenset(
    """goal goals find learn recall recalled reflect reflected explore explored place places
    touch touches left failed listed children child read bytes budget wrote rewrote fetched said
    started""".split()
)
# A path (/a/b.md) or URL, as one token, so that its parts do not become words.
PLACE = re.compile(r"[a-z][a-z0-9+.-]*://\S+|(?<![\w/])/[^\s\"'(),;]*", re.IGNORECASE)
WORD = re.compile(r"[^\W\d_]+")  # letters only: `user_preferences` is two words


def key_terms(text: str) -> list[str]:
    """The thought's MAX_CONCEPTS most frequent content words, lower case, counted by stem and
    each named by its most frequent form (ties: the first written); ties between stems in order
    of appearance."""
    counts: dict[str, int] = {}
    forms: dict[str, dict[str, int]] = {}
    for word in WORD.findall(PLACE.sub(" ", text).lower()):
        if len(word) < CONCEPT_MIN_CHARS or word in STOP_WORDS or word in REFLECTION_WORDS:
            continue
        stem = root(word)
        counts[stem] = counts.get(stem, 0) + 1
        seen = forms.setdefault(stem, {})
        seen[word] = seen.get(word, 0) + 1
    order = {stem: position for position, stem in enumerate(counts)}
    ranked = sorted(counts, key=lambda stem: (-counts[stem], order[stem]))[:MAX_CONCEPTS]
    # max keeps the first of equal counts, and a dict keeps the order words were first written.
    return [max(forms[stem], key=forms[stem].__getitem__) for stem in ranked]
