"""A word's root: its Snowball (Porter 2) English stem, irregular forms mapped first, or a
light suffix strip. Pure: no Django, no database. Explained in docs/text.md."""

import functools
import threading

import snowballstemmer

# Forms no suffix rule reaches: a question asks whether she ran, the text says she runs. Only
# words with one common reading: "left" or "found" would join unrelated words.
IRREGULAR = {
    "ran": "run",
    "went": "go",
    "gone": "go",
    "bought": "buy",
    "met": "meet",
    "ate": "eat",
    "eaten": "eat",
    "saw": "see",
    "seen": "see",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "wrote": "write",
    "written": "write",
    "told": "tell",
    "said": "say",
    "thought": "think",
    "brought": "bring",
    "came": "come",
    "began": "begin",
    "begun": "begin",
    "sold": "sell",
    "paid": "pay",
    "spent": "spend",
    "sent": "send",
    "built": "build",
    "felt": "feel",
    "kept": "keep",
    "lost": "lose",
    "won": "win",
    "held": "hold",
    "knew": "know",
    "known": "know",
    "flew": "fly",
    "flown": "fly",
    "drove": "drive",
    "driven": "drive",
    "spoke": "speak",
    "spoken": "speak",
    "taught": "teach",
    "caught": "catch",
    "chose": "choose",
    "chosen": "choose",
    "broke": "break",
    "broken": "break",
    "grew": "grow",
    "grown": "grow",
    "wore": "wear",
    "worn": "wear",
    "slept": "sleep",
    "swam": "swim",
    "sang": "sing",
    "sung": "sing",
    "heard": "hear",
    "understood": "understand",
    "sat": "sit",
    "forgot": "forget",
    "forgotten": "forget",
    "children": "child",
    "men": "man",
    "women": "woman",
    "people": "person",
    "mice": "mouse",
    "feet": "foot",
    "teeth": "tooth",
}
_stemmers = threading.local()  # a Snowball stemmer holds the word it works on: one per thread


def stem(word: str) -> str:
    """A light suffix stripper, for the terms an option or a field name is matched by; ranking
    uses `root`."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@functools.lru_cache(maxsize=65_536)
def root(word: str) -> str:
    """The Snowball (Porter 2) English stem of a lower-case word, its irregular forms mapped
    first (ran, runs and running all give `run`)."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(IRREGULAR.get(word, word))
