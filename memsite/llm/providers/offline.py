"""The `offline` provider: deterministic heuristics, so the product runs with no key.
Explained in docs/llm.md."""

import functools
import logging
import math
import re
import threading
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import snowballstemmer
from django.conf import settings
from pydantic import BaseModel, ValidationError

from memsite.llm.errors import LLMError, Reason
from memsite.llm.providers.base import CallTrace, LLMRequest
from memsite.llm.purposes import Purpose
from memsite.llm.quoting import without_fences
from memsite.llm.replies import ReplyInvalid, describe_validation_error, parse_reply

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
CONTEXT_LABEL = re.compile(r"^\s*(?:context|text|content|document|notes?|memory|input|passage)\s*:\s*", re.IGNORECASE)
QUERY_LABEL = re.compile(
    r"^\s*(?:query|question|goal|task|search|request|topic|find|looking for)\s*:\s*(?P<text>\S.*)$",
    re.IGNORECASE,
)
OPTION_LINE = re.compile(
    r"^\s*(?:"
    r"(?P<num>\d{1,4})[.)]\s+(?:\[(?P<nkey>[^\]\n]{1,160})\]\s*)?"
    r"|\[(?P<key>[^\]\n]{1,160})\]\s*"
    r"|[-*\u2022]\s+(?:\[(?P<bkey>[^\]\n]{1,160})\]\s*|(?P<ckey>[A-Za-z][\w.\-/]{0,80}):\s+)?"
    r")(?P<text>\S.*)$"
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
WORD = re.compile(r"\w+", re.UNICODE)

logger = logging.getLogger(__name__)

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


def roots(text: str) -> list[str]:
    """The roots of a text's content words, in order: what ranking compares."""
    return [root(word) for word in WORD.findall(text.lower()) if word not in STOPWORDS and len(word) > 1]


def words(text: str) -> list[tuple[str, str]]:
    """(stem, word) for each content word."""
    return [(stem(word), word) for word in WORD.findall(text.lower()) if word not in STOPWORDS and len(word) > 1]


def terms(text: str) -> list[str]:
    return [term for term, _ in words(text)]


def overlap(query_terms: frozenset[str], text: str) -> float:
    """Shared terms, normalised by the text's length so a short precise option beats a long one
    that happens to mention everything."""
    text_terms = terms(text)
    if not text_terms or not query_terms:
        return 0.0
    shared = sum(1 for term in dict.fromkeys(text_terms) if term in query_terms)
    return shared / math.sqrt(len(set(text_terms)))


# Hybrid scores ------------------------------------------------------------------------------

K1, B = 1.2, 0.75  # BM25's saturation and length normalisation: among equal shares, short units first
ONE_TERM = 0.3  # a unit holding one term of a question of several: below any partial answer
LEXICAL_WEIGHT = 0.4  # of the lexical share, in the blend with the embedding's score
# all-MiniLM-L6-v2's cosines with a question: a sentence on another subject stays under the
# floor, one on the question's subject is near 0.6 (not an answer for that), a paraphrase of it
# 0.8 and up: alone, a cosine answers only at the top.
COSINE_FLOOR, COSINE_FULL = 0.3, 0.9
EMBEDDED_TEXTS = 4_096  # vectors kept between calls: a node read for several questions is embedded once
HEADING = re.compile(r"^(?:(?P<hashes>#{1,6})\s+\S|Node:\s)")
REPRESENTATIVE_TERMS = 4  # a sentence with fewer says too little to describe a text


@dataclass(frozen=True)
class Unit:
    """A text scored as a whole: a sentence, a line, an option's label."""

    text: str
    own: frozenset[str]  # its terms
    under: frozenset[str] = frozenset()  # the terms of the headings it sits under
    length: int = 0  # its terms, repeats counted
    heading: bool = False

    @property
    def terms(self) -> frozenset[str]:
        return self.own | self.under


def unit(text: str, *, under: frozenset[str] = frozenset(), heading: bool = False) -> Unit:
    own = roots(text)
    return Unit(text=text, own=frozenset(own), under=under, length=len(own), heading=heading)


@dataclass(frozen=True)
class Scored:
    score: float  # in [0, 1]
    text: str
    position: int  # in the units scored


class Lexical:
    """BM25's statistics over the units scored together: a term held by few of them weighs more."""

    def __init__(self, units: Sequence[Unit]):
        self.count = len(units)
        # Counted over the units' own terms: a heading's terms, shared by all the lines under
        # it, still count as rare when the question names them.
        self.held_by = Counter(term for item in units for term in item.own)
        self.average = max(1.0, sum(item.length for item in units) / max(len(units), 1))

    def weight(self, term: str) -> float:
        """BM25's idf; a term no unit holds weighs as the rarest held term, not more."""
        held = max(self.held_by.get(term, 0), 1)
        return math.log(1 + (self.count - held + 0.5) / (held + 0.5))

    def share(self, wanted: frozenset[str], item: Unit) -> float:
        """The weighted share of the question's terms the unit holds, itself or by its
        headings; nothing unless it holds one itself, and at most ONE_TERM for a single term
        of a question of several."""
        held = wanted & item.terms
        if not wanted or not wanted & item.own:
            return 0.0
        weights = {term: self.weight(term) for term in wanted}
        share = sum(weights[term] for term in held) / sum(weights.values())
        return min(share, ONE_TERM) if len(held) < min(2, len(wanted)) else share

    def bm25(self, wanted: frozenset[str], item: Unit) -> float:
        norm = K1 * (1 - B + B * item.length / self.average)
        return sum(self.weight(term) * (K1 + 1) / (1 + norm) for term in wanted & item.own)


def fuse(share: float, cosine: float) -> float:
    """The lexical share, raised by a close embedding: a paraphrase sharing no word can answer;
    a unit holding the question's terms is never demoted by a model that finds it far (tables
    and code lines embed poorly)."""
    semantic = min(1.0, max(0.0, (cosine - COSINE_FLOOR) / (COSINE_FULL - COSINE_FLOOR)))
    return max(share, LEXICAL_WEIGHT * share + (1 - LEXICAL_WEIGHT) * semantic)


def rank(query: str, units: Sequence[Unit]) -> list[Scored]:
    """The units best first by hybrid score; equal scores by BM25, then in the text's order."""
    wanted = frozenset(roots(query))
    lexical = Lexical(units)
    cosines = _cosines(query, [item.text for item in units]) if units else None
    scored = []
    for position, item in enumerate(units):
        share = lexical.share(wanted, item)
        score = share if cosines is None else fuse(share, cosines[position])
        scored.append((round(score, 6), lexical.bm25(wanted, item), position, item.text))
    scored.sort(key=lambda entry: (-entry[0], -entry[1], entry[2]))
    return [Scored(score=score, text=text, position=position) for score, _, position, text in scored]


def _embedder() -> Any:
    """The local sentence model when memsite runs it (MEMSITE_EMBEDDINGS=local), else None. A
    server's embeddings would make an offline call reach the network."""
    if settings.MEMSITE_EMBEDDINGS != "local":
        return None
    from memsite.llm import minilm  # numpy and the weights, loaded once used

    return minilm.model()


_embedded: dict[tuple[str, str], Any] = {}


def _cosines(query: str, texts: Sequence[str]) -> list[float] | None:
    """Each text's cosine with the query (the vectors are L2-normalised), or None with no model."""
    model = _embedder()
    if model is None:
        return None
    vectors: dict[str, Any] = {text: _embedded.get((model.name, text)) for text in (query, *texts)}
    missing = [text for text, vector in vectors.items() if vector is None]
    if missing:
        try:
            vectors.update(zip(missing, model.embed(missing), strict=True))
        except Exception:  # a broken model costs the fusion, not the reply
            logger.warning("The offline reading could not embed; lexical scores alone.", exc_info=True)
            return None
        if len(_embedded) + len(missing) > EMBEDDED_TEXTS:
            _embedded.clear()
        _embedded.update({(model.name, text): vectors[text] for text in missing})
    return [float(vectors[text] @ vectors[query]) for text in texts]


def headed_units(text: str) -> tuple[Unit, ...]:
    """The text's sentences in order, once each, every one with the terms of the headings above
    it: a table row or a list item is read under its title (a markdown heading, or the `Node:`
    line a prompt introduces a node's content with)."""
    stack: list[tuple[int, frozenset[str]]] = []
    units: dict[str, Unit] = {}
    for line in text.splitlines():
        match = HEADING.match(line.strip())
        under = frozenset().union(*(heading_terms for _, heading_terms in stack))
        if match:
            level = len(match["hashes"] or "")
            units.setdefault(line.strip(), unit(line.strip(), under=under, heading=True))
            stack = [entry for entry in stack if entry[0] < level] + [(level, frozenset(roots(line)))]
            continue
        for part in SENTENCE_END.split(line):
            part = part.strip()
            if len(part) > 1:
                units.setdefault(part, unit(part, under=under))
    return tuple(units.values())


@dataclass(frozen=True)
class Option:
    position: int  # 0-based order in the prompt
    number: int | None  # as numbered in the prompt ("3. ..."), if it was
    key: str | None  # an id shown with it ("[memory_ab12] ...", "- docs: ...")
    text: str
    score: float

    @property
    def index(self) -> int:
        return self.number if self.number is not None else self.position

    @property
    def ref(self) -> str:
        return self.key or (str(self.number) if self.number is not None else self.text)


@dataclass(frozen=True)
class Reading:
    """What the heuristics read from a conversation."""

    query: str
    context: str
    options: tuple[Option, ...]
    system: str = ""  # the system messages' text, which `context` leaves out
    last: str = ""  # the last user message, whole

    @cached_property
    def query_terms(self) -> frozenset[str]:
        return frozenset(terms(self.query))

    @cached_property
    def best(self) -> Option | None:
        if not self.options:
            return None
        return max(self.options, key=lambda option: (option.score, -option.position))

    @cached_property
    def ranked_options(self) -> tuple[Option, ...]:
        return tuple(sorted(self.options, key=lambda option: (-option.score, option.position)))

    @cached_property
    def sentences(self) -> tuple[str, ...]:
        parts = (part.strip() for part in SENTENCE_END.split(self.context))
        return tuple(dict.fromkeys(part for part in parts if len(part) > 1))

    @cached_property
    def units(self) -> tuple[Unit, ...]:
        return headed_units(self.context)

    @cached_property
    def body(self) -> tuple[Unit, ...]:
        """The text's own sentences and lines: not its headings, nor the line naming the node."""
        return tuple(item for item in self.units if not item.heading)

    @cached_property
    def ranked_sentences(self) -> tuple[tuple[float, str], ...]:
        """(score, sentence), most relevant to the query first; ties keep the text's order."""
        return tuple((scored.score, scored.text) for scored in rank(self.query, self.units))

    def rank(self, query: str) -> list[Scored]:
        """The body's sentences best first for `query` (a question of several the prompt asks)."""
        if query not in self._ranks:
            self._ranks[query] = rank(query, self.body)
        return self._ranks[query]

    @cached_property
    def _ranks(self) -> dict[str, list[Scored]]:
        return {}

    @cached_property
    def keywords(self) -> tuple[str, ...]:
        return frequent_words(self.context or self.query)

    def representative(self) -> str:
        """The body's sentence closest to the whole: for each of its terms, how many of the
        body's sentences hold it, summed, per square root of its own count (a cosine with the
        text's term vector), among those of REPRESENTATIVE_TERMS terms or more when there are."""
        counts = Counter(term for item in self.body for term in item.own)
        candidates = [item for item in self.body if len(item.own) >= REPRESENTATIVE_TERMS] or list(self.body)
        if not candidates:
            return ""
        closeness = [sum(counts[term] for term in item.own) / math.sqrt(len(item.own) or 1) for item in candidates]
        return candidates[max(range(len(candidates)), key=lambda at: (closeness[at], -at))].text

    @property
    def confidence(self) -> float:
        """The best option's overlap squashed into [0, 1], or the best sentence's score."""
        if self.best:
            return round(self.best.score / (1.0 + self.best.score), 3)
        return round(self.ranked_sentences[0][0], 3) if self.ranked_sentences else 0.0

    def relevant(self, count: int) -> list[str]:
        """Up to `count` sentences sharing terms with the query, in the text's order."""
        chosen = [sentence for score, sentence in self.ranked_sentences[:count] if score > 0]
        return [sentence for sentence in self.sentences if sentence in chosen]

    def lead(self, count: int) -> list[str]:
        return list(self.sentences[:count])


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


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def read_messages(messages: list[dict[str, Any]]) -> Reading:
    # The fences of quoted data (memsite.llm.quoting) are markup, not what the text says.
    turns = [(message.get("role"), without_fences(_text_of(message))) for message in messages]
    user_texts = [text for role, text in turns if role == "user"] or [text for _, text in turns]
    last = user_texts[-1] if user_texts else ""

    query = ""
    for text in reversed(user_texts):
        for line in text.splitlines():
            match = QUERY_LABEL.match(line)
            if match:
                query = match["text"].strip()
                break
        if query:
            break

    option_lines: set[str] = set()
    raw_options: list[tuple[int | None, str | None, str]] = []
    for line in last.splitlines():
        match = OPTION_LINE.match(line)
        if match and not QUERY_LABEL.match(line):
            number = int(match["num"]) if match["num"] else None
            key = match["nkey"] or match["key"] or match["bkey"] or match["ckey"]
            raw_options.append((number, key.strip() if key else None, match["text"].strip()))
            option_lines.add(line)

    plain_last = [line for line in last.splitlines() if line not in option_lines and line.strip()]
    if not query:
        query = plain_last[0].strip() if plain_last else last.strip()
    context_parts = []
    for role, text in turns:
        if role == "system":
            continue
        kept = [
            line
            for line in text.splitlines()
            if line not in option_lines and not QUERY_LABEL.match(line) and line.strip() != query
        ]
        context_parts.append("\n".join(CONTEXT_LABEL.sub("", line) for line in kept))
    context = "\n".join(part for part in context_parts if part.strip()) or query

    query_terms = frozenset(terms(query))
    options = tuple(
        Option(position=position, number=number, key=key, text=text, score=overlap(query_terms, f"{key or ''} {text}"))
        for position, (number, key, text) in enumerate(raw_options)
    )
    system = "\n".join(text for role, text in turns if role == "system")
    return Reading(query=query, context=context, options=options, system=system, last=last)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


DESCRIPTION_CHARS = 300


def describe(reading: Reading) -> str:
    """An extractive description: the body's key terms, then its most representative sentence,
    cut at a word (so every word is the text's own), at most DESCRIPTION_CHARS."""
    body = "\n".join(item.text for item in reading.body)
    keys = ", ".join(frequent_words(body, 5))
    text = " \u2014 ".join(part for part in (keys, " ".join(reading.representative().split())) if part)
    if len(text) <= DESCRIPTION_CHARS:
        return text
    return text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:\u2014 ") + "\u2026"


def purpose_text(purpose: str, reading: Reading) -> str:
    """The text reply a purpose calls for."""
    keywords = ", ".join(reading.keywords[:5]) or "nothing in particular"
    if purpose in (Purpose.ROUTE, Purpose.DECIDE):
        best = reading.best
        if best is None:
            return _clip(reading.query, 200) or "none"
        return best.ref
    if purpose == Purpose.READ:
        return _clip(" ".join(reading.relevant(3) or reading.lead(2)), 1200)
    if purpose in (Purpose.ANSWER, Purpose.CHAT):
        found = reading.relevant(2)
        if found:
            return _clip(" ".join(found), 800)
        return "The stored context does not say."
    if purpose == Purpose.DESCRIBE:
        return describe(reading)
    if purpose == Purpose.REFLECT:
        salient = reading.relevant(1) or reading.lead(1)
        return _clip(f"Recurring themes: {keywords}. Most salient: {' '.join(salient)}", 600)
    if purpose == Purpose.DEEP_REFLECT:
        salient = reading.relevant(3) or reading.lead(3)
        pair = reading.keywords[:2]
        question = f" Open question: how do {pair[0]} and {pair[1]} relate?" if len(pair) == 2 else ""
        return _clip(f"Recurring themes: {keywords}. Salient points: {' '.join(salient)}{question}", 1200)
    if purpose == Purpose.MEMORIZE:
        return _clip(" ".join(reading.relevant(2) or reading.lead(2)), 600)
    # summarize, recall and anything new: the lead and the most relevant sentences.
    count = max(1, min(5, len(reading.sentences) // 4 or 1))
    chosen = set(reading.lead(1)) | set(reading.relevant(count))
    return _clip(" ".join(sentence for sentence in reading.sentences if sentence in chosen), 800)


def _word_forms(word: str) -> set[str]:
    word = word.lower()
    return {word, stem(word), word[:-1] if word.endswith("s") and len(word) > 2 else word}


def _name_matches(name: str, *words: str) -> bool:
    """Whether a field name contains one of `words` as a word (`node_ids` has `id`)."""
    parts = [part for part in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if part]
    forms = set().union(*(_word_forms(part) for part in parts)) if parts else set()
    return any(stem(word.lower()) in forms or word.lower() in forms for word in words)


ID_NAMES = (
    "id",
    "key",
    "choice",
    "option",
    "selected",
    "selection",
    "target",
    "node",
    "child",
    "next",
    "route",
    "pick",
    "action",
    "decision",
    "ref",
    "path",
)
INDEX_NAMES = ("index", "indice", "idx", "choice", "option", "selected", "position", "number", "rank")
KEYWORD_NAMES = ("keyword", "tag", "topic", "term", "entity", "entitie", "concept", "theme", "label")
SUMMARY_NAMES = ("summary", "abstract", "gist", "description", "synopsis", "overview", "digest")
REASON_NAMES = (
    "reason",
    "reasoning",
    "rationale",
    "why",
    "explanation",
    "justification",
    "thought",
    "thinking",
    "reflection",
    "insight",
    "analysis",
    "note",
    "comment",
)
TITLE_NAMES = ("title", "name", "heading", "subject", "headline")
QUERY_NAMES = ("query", "question", "goal", "task", "intent", "search", "subquery")
EVIDENCE_NAMES = ("quote", "evidence", "excerpt", "snippet", "fact", "sentence", "passage", "finding")
SCORE_NAMES = (
    "confidence",
    "score",
    "importance",
    "probability",
    "weight",
    "relevance",
    "certainty",
    "salience",
    "priority",
    "intensity",
)
TRUE_NAMES = (
    "relevant",
    "viable",
    "found",
    "match",
    "answerable",
    "done",
    "complete",
    "success",
    "useful",
    "sufficient",
    "enough",
    "answered",
)
# Strings of a fixed format: any valid one will do.
FORMATTED_STRINGS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "email": "offline@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
}


# Enum values a purpose leans to when the text itself does not decide.
ENUM_HINTS: dict[str, tuple[str, ...]] = {
    Purpose.MEMORIZE: ("evidence", "fact", "observation", "add", "note"),
    Purpose.RECALL: ("summary", "fold", "flush", "merge"),
    Purpose.SUMMARIZE: ("summary",),
    Purpose.REFLECT: ("thought", "reflection", "calm", "curious"),
    Purpose.DEEP_REFLECT: ("insight", "reflection", "curious"),
    Purpose.ANSWER: ("answer",),
    Purpose.READ: ("read", "relevant"),
}


class SchemaFiller:
    """Builds a JSON value for a JSON schema from a reading, deterministically."""

    def __init__(self, *, purpose: str, reading: Reading, root: dict[str, Any]):
        self.purpose = purpose
        self.reading = reading
        self.defs = root.get("$defs", {})
        self.text = purpose_text(purpose, reading)

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        seen = 0
        while "$ref" in schema and seen < 32:
            schema = {
                **self.defs.get(schema["$ref"].rsplit("/", 1)[-1], {}),
                **{k: v for k, v in schema.items() if k != "$ref"},
            }
            seen += 1
        return schema

    def value(self, schema: dict[str, Any], *, name: str = "", item: int = 0, depth: int = 0) -> Any:
        schema = self.resolve(schema)
        if depth > 12:
            return None
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.choose_enum(schema["enum"], name)
        for combinator in ("anyOf", "oneOf"):
            if combinator in schema:
                variants = [self.resolve(variant) for variant in schema[combinator]]
                concrete = [variant for variant in variants if variant.get("type") != "null"] or variants
                return self.value(concrete[0], name=name, item=item, depth=depth + 1)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return self.value(merged, name=name, item=item, depth=depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((entry for entry in kind if entry != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        return getattr(self, f"fill_{kind}", self.fill_null)(schema, name=name, item=item, depth=depth)

    def fill_null(self, schema: dict[str, Any], **_: Any) -> None:
        return None

    def fill_object(self, schema: dict[str, Any], *, name: str, item: int, depth: int) -> dict[str, Any]:
        required = set(schema.get("required", ()))
        filled = {}
        for prop, prop_schema in schema.get("properties", {}).items():
            # An optional field whose default is "nothing" keeps it: no invented edges or goals.
            if prop not in required and prop_schema.get("default", 0) in (None, [], {}):
                continue
            filled[prop] = self.value(prop_schema, name=prop, item=item, depth=depth + 1)
        return filled

    def fill_array(self, schema: dict[str, Any], *, name: str, item: int, depth: int) -> list[Any]:
        if "prefixItems" in schema:  # a tuple
            return [self.value(part, name=name, item=item, depth=depth + 1) for part in schema["prefixItems"]]
        low = schema.get("minItems", 0)
        high = schema.get("maxItems")
        items = self.resolve(schema.get("items", {}))
        is_scalar = items.get("type") in ("string", "integer", "number") and "enum" not in items
        if _name_matches(name, *KEYWORD_NAMES) and items.get("type") == "string":
            values: list[Any] = list(self.reading.keywords[:3])
        elif _name_matches(name, *ID_NAMES, *INDEX_NAMES) and is_scalar and self.reading.options:
            ranked = self.reading.ranked_options
            relevant = [option for option in ranked if option.score > 0] or list(ranked[:1])
            values = [option.index if items.get("type") != "string" else option.ref for option in relevant[:1]]
            values += [
                option.index if items.get("type") != "string" else option.ref
                for option in ranked
                if option not in relevant[:1]
            ][: max(low - 1, 0)]
        else:
            values = [self.value(items, name=name, item=index, depth=depth + 1) for index in range(max(low, 1))]
        while len(values) < low:
            values.append(self.value(items, name=name, item=len(values), depth=depth + 1))
        return values[:high] if high is not None else values

    def fill_string(self, schema: dict[str, Any], *, name: str, item: int, **_: Any) -> str:
        text = self.string_for(schema, name=name, item=item)
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if high is not None and len(text) > high:
            text = text[:high]
        if len(text) < low:
            text = (text + " " + self.reading.query + " " + "." * low).strip()[: max(low, high or low)]
            text = text.ljust(low, ".")
        return text

    def string_for(self, schema: dict[str, Any], *, name: str, item: int) -> str:
        reading = self.reading
        fmt = schema.get("format")
        if fmt == "uuid":
            seed = f"{self.purpose}\n{reading.query}\n{reading.context}\n{name}\n{item}"
            return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))
        if fmt in FORMATTED_STRINGS:
            return FORMATTED_STRINGS[fmt]
        ranked = [sentence for _, sentence in reading.ranked_sentences]
        if _name_matches(name, *ID_NAMES) and reading.options:
            return reading.best.ref  # type: ignore[union-attr]
        if _name_matches(name, *QUERY_NAMES):
            return reading.query
        if _name_matches(name, *TITLE_NAMES):
            return " ".join(word.capitalize() for word in reading.keywords[:3]) or _clip(reading.query, 60)
        if _name_matches(name, *KEYWORD_NAMES):
            return reading.keywords[item % len(reading.keywords)] if reading.keywords else reading.query
        if _name_matches(name, *EVIDENCE_NAMES):
            return ranked[item % len(ranked)] if ranked else reading.query
        if _name_matches(name, *SUMMARY_NAMES):
            return purpose_text(Purpose.SUMMARIZE, reading) if self.purpose != Purpose.DESCRIBE else self.text
        if _name_matches(name, *REASON_NAMES):
            return self.reason()
        if item and ranked:
            return ranked[item % len(ranked)]
        return self.text

    def reason(self) -> str:
        reading = self.reading
        if self.purpose in (Purpose.ROUTE, Purpose.DECIDE) and reading.best is not None:
            shared = [word for term, word in words(reading.best.text) if term in reading.query_terms]
            because = ", ".join(dict.fromkeys(shared)) or "no shared terms; first option"
            return f"Offline lexical match with the query ({because})."
        if self.purpose in (Purpose.REFLECT, Purpose.DEEP_REFLECT):
            return self.text
        return purpose_text(Purpose.REFLECT, reading)

    def fill_integer(self, schema: dict[str, Any], *, name: str, **_: Any) -> int:
        reading = self.reading
        if _name_matches(name, *INDEX_NAMES, *ID_NAMES) and reading.best is not None:
            value = reading.best.index
        elif _name_matches(name, *SCORE_NAMES):
            low, high = schema.get("minimum", 0), schema.get("maximum", 10)
            value = round(low + reading.confidence * (high - low))
        elif _name_matches(name, "count", "limit", "max", "top", "k", "n"):
            value = 1
        else:
            value = 0
        return int(self.clamp(value, schema, integer=True))

    def fill_number(self, schema: dict[str, Any], *, name: str, **_: Any) -> float:
        low, high = schema.get("minimum", 0.0), schema.get("maximum", 1.0)
        if _name_matches(name, *SCORE_NAMES):
            value = low + self.reading.confidence * (high - low)
        else:
            value = 0.0
        return float(self.clamp(value, schema, integer=False))

    def fill_boolean(self, schema: dict[str, Any], *, name: str, **_: Any) -> bool:
        if _name_matches(name, *TRUE_NAMES):
            return self.reading.confidence > 0
        return False

    @staticmethod
    def clamp(value: float, schema: dict[str, Any], *, integer: bool) -> float:
        step = 1 if integer else 1e-6
        if "minimum" in schema:
            value = max(value, schema["minimum"])
        if "exclusiveMinimum" in schema:
            value = max(value, schema["exclusiveMinimum"] + step)
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        if "exclusiveMaximum" in schema:
            value = min(value, schema["exclusiveMaximum"] - step)
        return value

    def choose_enum(self, values: list[Any], name: str) -> Any:
        if not values:
            return None
        query_terms = self.reading.query_terms | frozenset(stem(word) for word in self.reading.keywords)
        hints = ENUM_HINTS.get(self.purpose, ())
        scored = [
            (
                overlap(query_terms, str(value).replace("_", " ").replace("-", " "))
                + (1.0 if str(value).lower() in hints else 0.0),
                -position,
                value,
            )
            for position, value in enumerate(values)
        ]
        return max(scored, key=lambda entry: (entry[0], entry[1]))[2]


def _drop(data: Any, loc: tuple[Any, ...]) -> bool:
    """Remove the value at `loc` so the model's default applies; False if nothing was there."""
    parent = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return False
    if isinstance(parent, dict) and loc and loc[-1] in parent:
        del parent[loc[-1]]
        return True
    return False


def fill_schema(schema: type[BaseModel], *, purpose: str, reading: Reading) -> BaseModel:
    hook = getattr(schema, "offline_reply", None)
    if callable(hook):
        reply = hook(purpose=purpose, reading=reading)
        return reply if isinstance(reply, schema) else schema.model_validate(reply)
    try:
        json_schema = schema.model_json_schema()
    except Exception as exc:  # arbitrary types have no JSON schema
        raise LLMError(Reason.OFFLINE_UNSUPPORTED, f"{schema.__name__} has no JSON schema: {exc}") from None
    data = SchemaFiller(purpose=purpose, reading=reading, root=json_schema).value(json_schema)
    last_error: ValidationError | None = None
    for _ in range(4):
        try:
            return schema.model_validate(data)
        except ValidationError as exc:
            last_error = exc
            # Values a validator rejects are dropped so defaults apply; a required one cannot be.
            if not any(_drop(data, tuple(error["loc"])) for error in exc.errors()):
                break
    assert last_error is not None
    raise LLMError(
        Reason.OFFLINE_UNSUPPORTED,
        f"The offline provider cannot fill {schema.__name__}; give it an offline_reply "
        f"classmethod.\n{describe_validation_error(last_error)}",
    )


class OfflineProvider:
    name = "offline"

    def complete(self, request: LLMRequest, trace: CallTrace) -> BaseModel | str:
        trace.messages = request.messages
        reading = read_messages(request.messages)
        if request.schema is None:
            trace.response_mode = "text"
            text = purpose_text(request.purpose, reading)
        else:
            trace.response_mode = "json_schema"
            text = fill_schema(request.schema, purpose=request.purpose, reading=reading).model_dump_json()
        trace.reply = text
        trace.add_usage(messages=request.messages, reply=text, prompt_tokens=None, completion_tokens=None)
        if request.schema is None:
            return text
        try:
            # The same parse the openai provider uses, so an offline reply is held to the same bar.
            return parse_reply(text, request.schema)
        except ReplyInvalid as exc:
            raise LLMError(Reason.OFFLINE_UNSUPPORTED, str(exc)) from None
