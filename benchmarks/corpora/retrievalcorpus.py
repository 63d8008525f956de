"""The retrieval benchmark's corpus and questions, generated from a seed (no database reads
or writes: the search benchmark's tree comes as NodeSpec chunks, to be built later).

Nothing in it was written with memsite's ranking in mind, and no description says what a node
holds:

- conversations: one document a session between two named people
  (`/swarmstar/logs/session-017`, described only as `Session 17, Ana and Bo, 2026-03-04`),
  20–40 turns of small talk, with facts said once in single turns (jobs, homes, pets, trips,
  numbers, dates), some of them changed in a later session;
- notes (`/user/notes/…`) and project files (`/projects/<name>/…`) with no description, a fact
  on one of their lines;
- the generated tree of benchmarks/search.py (`/references/search-bench-<size>/…`), whose
  descriptions do say what each document is about.

Questions paraphrase the turn or line that answers them ("What does Ana do for a living?" for
"I started as a nurse at the county hospital") and come in kinds: `single` (one fact),
`multi` (two sessions hold the answer), `temporal` (the later of two values, or "when"),
`unanswerable` (nothing holds it), `files` (notes and project files) and `tree`. Each names
its evidence: the document and the line (a turn is a line) that answers it."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from benchmarks.corpora import searchtree
from benchmarks.corpora.treeshape import Chunk

CATEGORIES = ("single", "multi", "temporal", "unanswerable", "files", "tree")
# Questions of each category at scale 1 (fewer when the corpus has fewer candidates).
QUOTAS = {"single": 34, "multi": 12, "temporal": 24, "unanswerable": 12, "files": 20, "tree": 18}
SESSIONS, PEOPLE_COUNT, NOTES, PROJECTS, TREE_NODES = 60, 10, 24, 2, 1_000
LOGS, NOTES_FOLDER = "/swarmstar/logs", "/user/notes"
FIRST_DAY = date(2026, 1, 5)


@dataclass(frozen=True)
class Doc:
    path: str  # readable: /swarmstar/logs/session-017
    type: str  # document or project_file_bytes
    description: str
    text: str
    file_path: str = ""  # a project file's path inside its project


@dataclass(frozen=True)
class Evidence:
    path: str
    line: int  # 0-based: a session's turn, a file's line
    start: int  # character offsets of that line (or sentence) in the document's text
    end: int
    says: str  # the part of the answer it holds


@dataclass(frozen=True)
class Question:
    text: str
    category: str
    answer: str  # "" when nothing holds it
    parts: tuple[str, ...]  # what an answer must contain to be right
    evidence: tuple[Evidence, ...]


@dataclass
class Corpus:
    docs: list[Doc]
    questions: list[Question]
    tree_chunks: list[Chunk]  # the search benchmark's tree, for node_bulk_create
    projects: list[str] = field(default_factory=list)  # project root names, under /projects

    def by_category(self) -> dict[str, list[Question]]:
        return {category: [q for q in self.questions if q.category == category] for category in CATEGORIES}


# --- the words ------------------------------------------------------------------------------

PEOPLE = (
    "Ana",
    "Bo",
    "Carla",
    "Dev",
    "Elif",
    "Femi",
    "Goran",
    "Hana",
    "Ivo",
    "Jude",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sami",
    "Tess",
    "Umar",
    "Vera",
    "Wes",
    "Ximena",
    "Yusuf",
    "Zoe",
    "Arlo",
    "Bea",
    "Cyrus",
    "Dina",
)
JOBS = (
    "nurse",
    "carpenter",
    "pharmacist",
    "teacher",
    "architect",
    "translator",
    "electrician",
    "librarian",
    "data analyst",
    "paramedic",
    "baker",
    "accountant",
    "physiotherapist",
    "journalist",
    "welder",
    "chef",
    "dentist",
    "surveyor",
    "pilot",
    "gardener",
    "plumber",
    "midwife",
    "optician",
    "sound engineer",
)
EMPLOYERS = (
    "the county hospital",
    "a small firm in town",
    "the university",
    "a logistics company",
    "the city council",
    "a startup downtown",
    "a family business",
    "the regional airport",
)
CITIES = (
    "Porto",
    "Leeds",
    "Lyon",
    "Graz",
    "Tampere",
    "Bergen",
    "Utrecht",
    "Bologna",
    "Krakow",
    "Ghent",
    "Cork",
    "Malmo",
    "Brno",
    "Valencia",
    "Aarhus",
    "Ljubljana",
    "Tallinn",
    "Seville",
)
DESTINATIONS = (
    "Kyoto",
    "Lima",
    "Oslo",
    "Hanoi",
    "Reykjavik",
    "Marrakech",
    "Tbilisi",
    "Havana",
    "Seoul",
    "Cusco",
    "Nairobi",
    "Montreal",
    "Hobart",
    "Istanbul",
    "Cartagena",
    "Zanzibar",
)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
BREEDS = {
    "dog": ("beagle", "collie", "terrier", "greyhound", "spaniel", "dachshund"),
    "cat": ("tabby", "siamese", "ragdoll", "maine coon"),
    "bird": ("parakeet", "cockatiel", "canary"),
    "rabbit": ("lop-eared bunny", "dwarf bunny"),
}
PET_NAMES = (
    "Pickle",
    "Miso",
    "Biscuit",
    "Juniper",
    "Pepper",
    "Olive",
    "Waffles",
    "Ziggy",
    "Nutmeg",
    "Clover",
    "Mango",
    "Pretzel",
    "Tofu",
    "Basil",
    "Ginger",
    "Noodle",
    "Pixel",
    "Turnip",
    "Muffin",
    "Socks",
    "Bramble",
    "Kiwi",
    "Sprout",
    "Dumpling",
)
ORDINALS = ("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh")
COUNTS = ("two", "three", "four", "five", "six", "seven")

SLOTS = {
    "sport": ("football", "rugby", "basketball", "tennis", "cricket"),
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "food": ("lasagne", "curry", "tacos", "lentil soup", "risotto", "stir fry", "pancakes"),
    "show": ("that detective series", "the baking show", "the new space drama", "the quiz show"),
    "place": ("the harbour", "the old mill", "the park", "the canal", "the botanical garden"),
    "weather": ("grey", "miserable", "surprisingly warm", "windy", "foggy"),
    "animal": ("dog", "parrot", "cat", "rooster"),
    "topic": ("old shipwrecks", "bees", "city planning", "jazz history", "volcanoes"),
    "colour": ("green", "pale blue", "white", "terracotta"),
    "hobby": ("pottery", "salsa", "climbing", "watercolour", "choir"),
}
SMALL_TALK = (
    "Did you catch the {sport} game on {day}?",
    "I'm so tired, this week has been endless.",
    "We had {food} for dinner again, nobody complained.",
    "The weather has been {weather} all week here.",
    "Have you started watching {show}? Everyone keeps talking about it.",
    "I need to sort out the garden before it gets any colder.",
    "Traffic on the ring road was a nightmare this morning.",
    "My neighbour's {animal} woke me up at five again.",
    "I tried that new cafe near {place}, the coffee was fine, nothing special.",
    "Work is busy, lots of meetings that could have been emails.",
    "We should get lunch sometime next week.",
    "I've been listening to a podcast about {topic}, it's oddly relaxing.",
    "The kids have a school concert on {day}.",
    "I finally fixed the leaking tap in the bathroom.",
    "My phone battery dies constantly, I need a new one.",
    "Did you hear they're closing the bakery on the corner?",
    "I went for a long walk by {place} on {day}, it was lovely.",
    "I keep meaning to read more, but I fall asleep after two pages.",
    "We're thinking about painting the living room {colour}.",
    "The train was cancelled again so I worked from home.",
    "My mum called, she wants everyone over on {day}.",
    "I've been trying to cook more, last night was {food}.",
    "Someone at the office brought cake, so that was the highlight.",
    "I signed up for a {hobby} class, we'll see how long that lasts.",
    "I need a holiday, honestly.",
    "Our internet went down for the whole evening.",
    "I lost my umbrella again, third one this year.",
    "Have you been to the market on {day}? The fruit was great.",
    "My back hurts from that chair at work.",
    "I spent the whole weekend doing laundry and sleeping.",
    "The car made a strange noise on the way back from {place}.",
    "I can't believe it's already {day} again.",
    "We watched {show} until two in the morning, terrible idea.",
    "The heating in our building is broken, everyone's wearing coats inside.",
    "I finally returned those library books, the fine was tiny.",
    "My cousin is visiting next week, so the spare room is a mess.",
)
REPLIES = (
    "Ha, same here.",
    "Oh no, that sounds rough.",
    "Nice, I'd like that.",
    "Really? I had no idea.",
    "Fair enough.",
    "I know what you mean.",
    "Let me know how it goes.",
    "Tell me more!",
    "Sounds about right.",
    "Oh I love that.",
    "Hmm, maybe.",
    "Good for you.",
    "Same old, same old.",
    "Wow, okay.",
    "That's the worst.",
    "Honestly, me too.",
)
REACTIONS = ("Congratulations, that's huge!", "Oh, how lovely!", "That's a big change.", "Good to know.", "Wow, noted.")


def fill(template: str, rng: random.Random) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: rng.choice(SLOTS[m[1]]), template)


class Pool:
    """Values drawn without repeats until each has been drawn, then again in a new order."""

    def __init__(self, values: Sequence[str], rng: random.Random):
        self.values, self.rng, self.left = tuple(values), rng, []

    def take(self) -> str:
        if not self.left:
            self.left = self.rng.sample(self.values, len(self.values))
        return self.left.pop()


# --- facts about people ---------------------------------------------------------------------


@dataclass(frozen=True)
class FactKind:
    said: tuple[str, ...]  # what the person says; {v} is the value
    asked: tuple[str, ...]  # the question; {p} is the person
    values: Callable[[random.Random], str]
    unit: str = ""  # appended to the value in the answer


def _day(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)}"


NUMBERS = {
    "half marathon": FactKind(
        ("My half marathon time is down to {v}, finally.", "Ran the half marathon in {v} on Sunday, legs are dead."),
        ("What is {p}'s personal best over 21 kilometres?", "How long did {p} take to run 21 km?"),
        lambda rng: f"1:{rng.randint(32, 59):02d}",
    ),
    "floor": FactKind(
        (
            "Our new flat is on the {v} floor and there's no lift.",
            "We're up on the {v} floor now, the stairs are a workout.",
        ),
        ("Which storey of the building does {p} live on?",),
        lambda rng: rng.choice(ORDINALS),
    ),
    "bike": FactKind(
        ("I paid {v} euros for the bike in the end.", "The bike set me back {v} euros, but it's worth it."),
        ("How much did {p}'s bicycle cost?", "What price did {p} pay for the new cycle?"),
        lambda rng: str(rng.randrange(180, 1400, 10)),
        " euros",
    ),
    "siblings": FactKind(
        ("I have {v} siblings, so family dinners are loud.",),
        ("How many brothers and sisters does {p} have?",),
        lambda rng: rng.choice(COUNTS),
    ),
    "commute": FactKind(
        ("The commute is {v} minutes each way, it's killing me.", "It takes me {v} minutes to get to the office."),
        ("How long is {p}'s journey to work?",),
        lambda rng: str(rng.randrange(15, 95, 5)),
        " minutes",
    ),
    "rent": FactKind(
        ("The rent went up to {v} euros a month, ridiculous.",),
        ("How much does {p} pay for housing each month?",),
        lambda rng: str(rng.randrange(600, 2400, 25)),
        " euros",
    ),
}
DATES = {
    "wedding": FactKind(
        ("My sister's wedding is on {v}, save the date.", "My sister finally set a date: {v}."),
        ("When is {p}'s sister getting married?",),
        _day,
    ),
    "surgery": FactKind(
        ("The knee surgery is booked for {v}.", "They scheduled the operation on my knee for {v}."),
        ("On what date is {p}'s knee procedure?",),
        _day,
    ),
    "driving test": FactKind(
        ("I take my driving test on {v}, wish me luck.",),
        ("When is {p}'s road exam for the licence?",),
        _day,
    ),
    "exam": FactKind(
        ("My certification exam is on {v}, I'm revising every night.",),
        ("When will {p} sit the qualification test?",),
        _day,
    ),
}
JOB_SAID = (
    "Oh, I didn't tell you: I started as a {v} at {org} this month.",
    "These days I'm a {v} at {org}, the hours are long but I like it.",
)
JOB_CHANGED = (
    "Big news, I handed in my notice. I'm a {v} at {org} now.",
    "I switched careers, believe it or not: {v} at {org} since last week.",
)
HOME_SAID = ("We're settled in {v} now, the flat is near the river.", "Living in {v} has been good for us so far.")
HOME_CHANGED = ("The move is done: we live in {v} since last weekend.", "We finally relocated, {v} is home now.")
PET_SAID = (
    "We brought home a {breed} on Saturday, we're calling her {v}.",
    "Meet the newest member of the house: a {breed} called {v}.",
)
TRIP_SAID = ("Booked it: ten days in {v} in {month}, I can't wait.", "We're off to {v} in {month}, flights are sorted.")


@dataclass
class Said:
    """A fact one person states in one session's turn; `evidence` is filled once it is placed."""

    who: str
    session: int
    text: str
    says: str
    evidence: Evidence | None = None


@dataclass
class Person:
    name: str
    sessions: list[int]  # the sessions they are in, in order
    said: list[Said] = field(default_factory=list)
    # (category, question, answer, parts, the Said items holding it)
    asks: list[tuple[str, str, str, tuple[str, ...], tuple[Said, ...]]] = field(default_factory=list)
    unanswerable: list[str] = field(default_factory=list)


def _say(person: Person, session: int, text: str, says: str) -> Said:
    said = Said(person.name, session, text, says)
    person.said.append(said)
    return said


def _changing(
    person: Person,
    rng: random.Random,
    *,
    values: Sequence[str],
    said: tuple[str, ...],
    changed: tuple[str, ...],
    single: tuple[str, ...],
    latest: str,
    both: str,
    org: bool,
) -> None:
    """A job or a home: said once, or said and changed in a later session."""
    first, second = rng.sample(list(values), 2)
    where = {"org": rng.choice(EMPLOYERS)} if org else {}
    if len(person.sessions) < 2 or rng.random() < 0.5:
        fact = _say(person, rng.choice(person.sessions), rng.choice(said).format(v=first, **where), first)
        person.asks.append(("single", rng.choice(single).format(p=person.name), first, (first,), (fact,)))
        return
    early, late = sorted(rng.sample(person.sessions, 2))
    old = _say(person, early, rng.choice(said).format(v=first, **where), first)
    moved = {"org": rng.choice(EMPLOYERS)} if org else {}
    new = _say(person, late, rng.choice(changed).format(v=second, **moved), second)
    person.asks.append(("temporal", latest.format(p=person.name), second, (second,), (new,)))
    person.asks.append(("multi", both.format(p=person.name), f"{first} and {second}", (first, second), (old, new)))


def _how_many(person: Person, rng: random.Random) -> int:
    """How many facts of a kind a person states: none, one or two (two only if in two sessions)."""
    return rng.choices((0, 1, 2), weights=(3, 4, 3))[0] if len(person.sessions) >= 2 else rng.choice((0, 1))


def _asked_about(
    person: Person,
    rng: random.Random,
    facts: Sequence[Said],
    *,
    unanswerable: str,
    single: tuple[str, ...],
    multi: tuple[str, ...],
    **words: str,
) -> None:
    """The question on facts of a kind: unanswerable with none, `single` with one, `multi`
    (both the answer) with two; `words` fill the question's other slots."""
    if not facts:
        person.unanswerable.append(unanswerable)
    elif len(facts) == 1:
        question = rng.choice(single)
        person.asks.append(
            ("single", question.format(p=person.name, **words), facts[0].says, (facts[0].says,), tuple(facts))
        )
    else:
        both = " and ".join(fact.says for fact in facts)
        question = rng.choice(multi)
        person.asks.append(("multi", question.format(p=person.name), both, tuple(f.says for f in facts), tuple(facts)))


def _pets(person: Person, rng: random.Random, names: Pool) -> None:
    count = _how_many(person, rng)
    species = rng.sample(sorted(BREEDS), 2)
    facts = []
    for kind, session in zip(species[:count], rng.sample(person.sessions, count), strict=True):
        name = names.take()
        facts.append(_say(person, session, rng.choice(PET_SAID).format(breed=rng.choice(BREEDS[kind]), v=name), name))
    _asked_about(
        person,
        rng,
        facts,
        unanswerable=f"What is the name of {person.name}'s {species[0]}?",
        single=("What is the name of {p}'s {s}?", "What did {p} call the {s} they adopted?"),
        multi=("What are the names of {p}'s two pets?", "What are {p}'s two animals called?"),
        s=species[0],
    )


def _trips(person: Person, rng: random.Random, places: Pool) -> None:
    facts = []
    for session in sorted(rng.sample(person.sessions, _how_many(person, rng))):
        city, month = places.take(), rng.choice(MONTHS)
        facts.append(_say(person, session, rng.choice(TRIP_SAID).format(v=city, month=month), city))
        when = rng.choice(("In which month is {p}'s holiday in {c}?", "When does {p} travel to {c}?"))
        person.asks.append(("temporal", when.format(p=person.name, c=city), month, (month,), (facts[-1],)))
    _asked_about(
        person,
        rng,
        facts,
        unanswerable=f"Which city is {person.name} visiting on holiday?",
        single=("Which city is {p} visiting on holiday?", "Where is {p} going for the vacation?"),
        multi=("Which two cities is {p} travelling to this year?", "Where are {p}'s two holidays this year?"),
    )


def _facts_of(person: Person, kinds: dict[str, FactKind], chosen: int, category: str, rng: random.Random) -> None:
    """`chosen` facts of these kinds, the others asked about as unanswerable."""
    names = sorted(kinds)
    rng.shuffle(names)
    for name in names[:chosen]:
        kind = kinds[name]
        value = kind.values(rng)
        fact = _say(person, rng.choice(person.sessions), rng.choice(kind.said).format(v=value), value)
        person.asks.append(
            (category, rng.choice(kind.asked).format(p=person.name), value + kind.unit, (value,), (fact,))
        )
    for name in names[chosen:]:
        person.unanswerable.append(rng.choice(kinds[name].asked).format(p=person.name))


def _person_facts(person: Person, rng: random.Random, pets: Pool, places: Pool) -> None:
    _changing(
        person,
        rng,
        values=JOBS,
        said=JOB_SAID,
        changed=JOB_CHANGED,
        org=True,
        single=("What does {p} do for a living?", "What is {p}'s occupation?"),
        latest="What does {p} do for work these days?",
        both="Which two jobs has {p} mentioned having?",
    )
    _changing(
        person,
        rng,
        values=CITIES,
        said=HOME_SAID,
        changed=HOME_CHANGED,
        org=False,
        single=("Which city is {p} based in?", "In what town does {p} have a home?"),
        latest="Where does {p} live now?",
        both="Which two cities has {p} lived in?",
    )
    _pets(person, rng, pets)
    _trips(person, rng, places)
    _facts_of(person, NUMBERS, 2, "single", rng)
    _facts_of(person, DATES, 1, "temporal", rng)


# --- sessions -------------------------------------------------------------------------------


def _schedule(people: Sequence[str], sessions: int, rng: random.Random) -> list[tuple[str, str]]:
    """Who talks in each session: a pair of people, everyone about equally often."""
    pairs = []
    for _ in range(sessions):
        weights = [1 / (1 + sum(name in pair for pair in pairs)) for name in people]
        first = rng.choices(people, weights=weights)[0]
        second = rng.choices(
            [p for p in people if p != first], weights=[w for p, w in zip(people, weights, strict=True) if p != first]
        )[0]
        pairs.append((first, second))
    return pairs


def _turns(pair: tuple[str, str], facts: Sequence[Said], rng: random.Random) -> tuple[list[str], list[int]]:
    """20–40 turns of small talk, alternating, with each fact in a turn of its own speaker and a
    reaction after it; returns the lines and the line of each fact."""
    count = max(rng.randint(20, 40), 4 * len(facts) + 2)  # room for every fact and its reaction
    first = rng.randint(0, 1)
    speakers = [pair[(i + first) % 2] for i in range(count)]
    texts: list[str | None] = [None] * count
    where = []
    for fact in facts:
        free = [
            i for i in range(count) if speakers[i] == fact.who and texts[i] is None and (i == 0 or texts[i - 1] is None)
        ]
        at = rng.choice(free or [i for i in range(count) if speakers[i] == fact.who and texts[i] is None])
        texts[at] = fact.text
        where.append(at)
        if at + 1 < count and texts[at + 1] is None:
            texts[at + 1] = rng.choice(REACTIONS)
    talk = rng.sample(SMALL_TALK, len(SMALL_TALK))
    for i in range(count):
        if texts[i] is None:
            answering = i and texts[i - 1] not in REPLIES and texts[i - 1] not in REACTIONS
            if answering and rng.random() < 0.4:
                texts[i] = rng.choice(REPLIES)
            else:
                texts[i] = fill(talk.pop() if talk else rng.choice(SMALL_TALK), rng)
    return [f"{speaker}: {text}" for speaker, text in zip(speakers, texts, strict=True)], where


def _placed(path: str, lines: Sequence[str], line: int, says: str) -> Evidence:
    start = sum(len(text) + 1 for text in lines[:line])
    return Evidence(path=path, line=line, start=start, end=start + len(lines[line]), says=says)


def conversations(rng: random.Random, *, sessions: int, people: int) -> tuple[list[Doc], list[Question], list[str]]:
    """The sessions, the questions about what was said in them, and unanswerable questions."""
    names = list(PEOPLE[:people])
    pairs = _schedule(names, sessions, rng)
    persons = {name: Person(name, [i for i, pair in enumerate(pairs) if name in pair]) for name in names}
    pets, places = Pool(PET_NAMES, rng), Pool(DESTINATIONS, rng)
    for person in persons.values():
        if person.sessions:
            _person_facts(person, rng, pets, places)
    docs, day = [], FIRST_DAY
    for index, pair in enumerate(pairs):
        day += timedelta(days=rng.randint(1, 4))
        here = [fact for person in persons.values() for fact in person.said if fact.session == index]
        lines, at = _turns(pair, here, rng)
        path = f"{LOGS}/session-{index + 1:03d}"
        for fact, line in zip(here, at, strict=True):
            fact.evidence = _placed(path, lines, line, fact.says)
        docs.append(
            Doc(
                path,
                "document",
                f"Session {index + 1}, {pair[0]} and {pair[1]}, {day.isoformat()}",
                "\n".join(lines) + "\n",
            )
        )
    questions = [
        Question(text, category, answer, parts, tuple(fact.evidence for fact in facts))
        for person in persons.values()
        for category, text, answer, parts, facts in person.asks
    ]
    unanswerable = [text for person in persons.values() for text in person.unanswerable]
    return docs, questions, unanswerable


# --- notes and project files ------------------------------------------------------------------


@dataclass(frozen=True)
class LineFact:
    line: str  # {v} is the value
    asked: str
    values: tuple[str, ...]
    unit: str = ""


WEEKDAYS = SLOTS["day"][:5]
NOTE_FACTS = (
    LineFact(
        "wifi: {v} (the password is on the fridge)",
        "What is the home wireless network called?",
        ("tern-5G", "Casa-Mesa", "BlueHeron", "Attic-Net"),
    ),
    LineFact(
        "Landlord: {v}, call before 6pm.",
        "Who do we rent the flat from?",
        ("Mr. Okafor", "Mrs. Lindqvist", "Mr. Ferreira", "Ms. Duval"),
    ),
    LineFact(
        "- dentist moved to {v}", "When is the next dental appointment?", ("3 March", "17 April", "9 June", "21 May")
    ),
    LineFact(
        "Book club reads {v} for next month.",
        "Which novel did the reading group pick?",
        ("The Dispossessed", "Middlemarch", "Piranesi", "Kindred"),
    ),
    LineFact(
        "Locker code at the gym: {v}",
        "What is the combination for the fitness centre locker?",
        ("4719", "8052", "3316", "6620"),
    ),
    LineFact(
        "Plumber quoted {v} euros for the boiler.",
        "How much will repairing the heater cost?",
        ("340", "415", "280", "560"),
        " euros",
    ),
    LineFact(
        "Spare key is with {v} at number 12.",
        "Who keeps a copy of the house key?",
        ("Mrs. Aziz", "Tomas", "the Hendersons", "Grandpa Joe"),
    ),
    LineFact(
        "Car insurance renews on {v}.",
        "When does the vehicle cover expire?",
        ("30 September", "12 November", "2 August", "15 July"),
    ),
    LineFact("Bin day is {v}, recycling every other week.", "Which day is the rubbish collected?", WEEKDAYS),
    LineFact(
        "Paint for the hallway: {v}, two tins.",
        "What colour was chosen for the corridor walls?",
        ("Sage Mist", "Harbour Grey", "Oat Milk", "Clay Pot"),
    ),
    LineFact(
        "Vet: Dr. {v}, Elm Road clinic.",
        "What is the animal doctor's name?",
        ("Moreau", "Haddad", "Kowalski", "Brennan"),
    ),
    LineFact(
        "Sourdough: feed the starter {v} grams of flour.",
        "How much flour does the bread culture get?",
        ("50", "75", "100", "120"),
        " grams",
    ),
    LineFact(
        "Tax office reference: {v}",
        "What is our reference number with the revenue authority?",
        ("TX-48213", "TX-90377", "TX-15524", "TX-66201"),
    ),
    LineFact(
        "Electricity meter read {v} on the 1st.",
        "What did the power meter show at the start of the month?",
        ("40231", "38817", "51902", "29475"),
    ),
    LineFact(
        "The piano tuner comes on {v}.",
        "When is the instrument being tuned?",
        ("4 February", "19 March", "8 May", "26 June"),
    ),
    LineFact(
        "Babysitter: {v}, 12 euros an hour.",
        "Who looks after the children when we go out?",
        ("Mira", "Jonas", "Leila", "Sven"),
    ),
)
NOTE_STEMS = (
    "todo",
    "house",
    "shopping",
    "ideas",
    "reminders",
    "misc",
    "weekend",
    "admin",
    "kitchen",
    "garden",
    "money",
    "travel-prep",
)
NOTE_LINES = (
    "- buy {food} ingredients",
    "- call the bank about the card",
    "- water the plants",
    "- email the school",
    "Idea: a {hobby} evening with friends",
    "- pick up the dry cleaning",
    "- book a table for {day}",
    "Remember: the {sport} tickets",
    "- check the tyre pressure",
    "- back up the laptop",
    "- oil the squeaky door",
    "- return the drill to the neighbours",
    "- send photos from {place}",
    "- order more coffee filters",
    "- fix the wobbly chair",
    "- renew the library card",
    "Maybe paint the shed {colour}?",
    "- defrost the freezer",
)

PROJECT_NAMES = (
    "tern",
    "quarry",
    "lantern",
    "brook",
    "fennel",
    "gable",
    "hollow",
    "kiln",
    "loom",
    "marsh",
    "nettle",
    "orchard",
)
PURPOSES = (
    "syncs invoices between two ledgers",
    "resizes images on upload",
    "collects sensor readings from greenhouses",
    "sends reminder emails to members",
    "turns scanned receipts into spreadsheets",
    "watches a folder and backs it up",
)
MAINTAINERS = (
    "Priya Raman",
    "Tomas Vidal",
    "Ines Costa",
    "Marek Nowak",
    "Aiko Tanaka",
    "Olu Adeyemi",
    "Greta Holm",
    "Rafael Soto",
)
PROJECT_FACTS = {
    "README.md": LineFact("Maintained by {v}.", "Who looks after the {proj} project?", MAINTAINERS),
    "config/settings.toml": LineFact(
        "port = {v}",
        "On which port does the {proj} service accept connections?",
        ("8081", "8443", "9090", "7070", "5005"),
    ),
    "config/settings.toml#2": LineFact(
        "max_retries = {v}", "How many times does {proj} try a failed request again?", ("3", "4", "5", "7", "9")
    ),
    "client.py": LineFact(
        "TIMEOUT_SECONDS = {v}",
        "After how many seconds does a {proj} request give up?",
        ("15", "20", "30", "45", "90"),
        " seconds",
    ),
    "storage.py": LineFact(
        "CACHE_TTL = {v}  # seconds",
        "How long does {proj} keep entries in its cache?",
        ("60", "300", "600", "3600"),
        " seconds",
    ),
    "docs/deploy.md": LineFact(
        "Releases go out every {v} after the standup.", "On which day of the week is {proj} shipped?", WEEKDAYS
    ),
    "CHANGELOG.md": LineFact(
        "## {v}\n\n- Dropped support for Python 3.8.",
        "Which release of {proj} removed Python 3.8?",
        ("2.4.0", "1.9.0", "3.1.0", "0.8.0"),
    ),
}
CODE = (
    (
        'def {verb}_{noun}(items):\n    """{Verb} the {noun} entries, skipping empty ones."""\n    result = []\n'
        "    for item in items:\n        if not item:\n            continue\n        result.append(item)\n    "
        "return result\n"
    ),
    'def load_{noun}(path):\n    with open(path, encoding="utf-8") as handle:\n        return [line.strip() for '
    "line in handle if line.strip()]\n",
    'class {Noun}Error(Exception):\n    """Raised when a {noun} cannot be {verb}ed."""\n',
    "def {verb}_all(session, rows):\n    for row in rows:\n        session.add(row)\n    session.commit()\n    "
    "return len(rows)\n",
)
CODE_WORDS = {
    "verb": ("parse", "clean", "merge", "export", "check", "render"),
    "noun": ("invoice", "image", "reading", "member", "receipt", "record"),
}


def _lines_with(lines: list[str], fact_line: str, rng: random.Random) -> list[str]:
    """The lines with `fact_line` put in at a random place past the first."""
    at = rng.randint(1, len(lines))
    return [*lines[:at], fact_line, *lines[at:]]


def _line_evidence(path: str, text: str, fact_line: str, says: str) -> Evidence:
    start = text.index(fact_line)
    return Evidence(path=path, line=text[:start].count("\n"), start=start, end=start + len(fact_line), says=says)


def notes(rng: random.Random, count: int) -> tuple[list[Doc], list[Question]]:
    """Notes with no description; the first ones hold a fact each (there are as many facts as
    NOTE_FACTS: more notes hold only lists)."""
    docs, questions = [], []
    facts = rng.sample(NOTE_FACTS, len(NOTE_FACTS))
    for index in range(count):
        stem = NOTE_STEMS[index % len(NOTE_STEMS)]
        name = f"{stem}.md" if index < len(NOTE_STEMS) else f"{stem}-{index // len(NOTE_STEMS) + 1}.md"
        lines = [fill(line, rng) for line in rng.sample(NOTE_LINES, rng.randint(6, 14))]
        path = f"{NOTES_FOLDER}/{name}"
        fact = facts[index] if index < len(facts) else None
        if fact is not None:
            value = rng.choice(fact.values)
            line = fact.line.format(v=value)
            lines = _lines_with(lines, line, rng)
        text = f"# {stem.replace('-', ' ')}\n\n" + "\n".join(lines) + "\n"
        if fact is not None:
            evidence = _line_evidence(path, text, line, value)
            questions.append(Question(fact.asked, "files", value + fact.unit, (value,), (evidence,)))
        docs.append(Doc(path, "document", "", text))
    return docs, questions


def _code(rng: random.Random, blocks: int) -> list[str]:
    def word(match: re.Match) -> str:
        value = rng.choice(CODE_WORDS[match[1].lower()])
        return value.capitalize() if match[1][0].isupper() else value

    return [re.sub(r"\{(\w+)\}", word, block) for block in rng.sample(CODE, min(blocks, len(CODE)))]


def _project_files(name: str, rng: random.Random) -> dict[str, list[str]]:
    """The files of one project before its facts go in, as lines."""
    purpose = rng.choice(PURPOSES)

    def code() -> list[str]:
        return "\n\n".join(_code(rng, rng.randint(2, 4))).splitlines()

    return {
        "README.md": [
            f"# {name}",
            "",
            f"{name} is a small service that {purpose}.",
            "",
            "## Install",
            "",
            "    pip install -e .",
            "",
            "## Usage",
            "",
            f"    {name} run --config config/settings.toml",
            "",
            "Bug reports are welcome.",
        ],
        "config/settings.toml": [
            "[service]",
            f'name = "{name}"',
            'host = "0.0.0.0"',
            "workers = 4",
            "",
            "[client]",
            "backoff = 0.5",
            'user_agent = "' + name + '/1"',
            "",
            "[logging]",
            'level = "info"',
        ],
        f"src/{name}/__init__.py": [f'"""{name}: a service that {purpose}."""', "", '__all__ = ["run"]'],
        f"src/{name}/client.py": ["import json", "import urllib.request", "", *code()],
        f"src/{name}/storage.py": ["import sqlite3", "", *code()],
        "docs/deploy.md": [
            "# Deploying",
            "",
            "Build the wheel, copy it to the host and restart the unit.",
            "Check the logs for a minute afterwards.",
            "Roll back by installing the previous wheel.",
        ],
        "CHANGELOG.md": [
            "# Changelog",
            "",
            "## Unreleased",
            "",
            "- Clearer error messages.",
            "",
            "## 0.1.0",
            "",
            "- First release.",
        ],
        "Makefile": ["test:", "\tpython -m pytest", "", "lint:", "\truff check src"],
    }


def projects(rng: random.Random, count: int) -> tuple[list[Doc], list[Question], list[str]]:
    """Projects under /projects, their files with no description, facts on single lines."""
    docs, questions = [], []
    names = [
        PROJECT_NAMES[i % len(PROJECT_NAMES)] + (f"-{i // len(PROJECT_NAMES) + 1}" if i >= len(PROJECT_NAMES) else "")
        for i in range(count)
    ]
    for name in names:
        files = _project_files(name, rng)
        placed = []
        for key, fact in PROJECT_FACTS.items():
            file_path = next(path for path in files if path.endswith(key.split("#")[0]))
            value = rng.choice(fact.values)
            line = fact.line.format(v=value)
            files[file_path] = _lines_with(files[file_path], line, rng)
            placed.append((file_path, line, value, fact))
        texts = {file_path: "\n".join(lines) + "\n" for file_path, lines in files.items()}
        for file_path, text in texts.items():
            docs.append(Doc(f"/projects/{name}/{file_path}", "project_file_bytes", "", text, file_path=file_path))
        for file_path, line, value, fact in placed:
            evidence = _line_evidence(f"/projects/{name}/{file_path}", texts[file_path], line, value)
            questions.append(Question(fact.asked.format(proj=name), "files", value + fact.unit, (value,), (evidence,)))
    return docs, questions, names


# --- the search benchmark's tree --------------------------------------------------------------


ANSWER = re.compile(r"^The .+ of \S+ was (?P<value>.+)\.$")


def tree(total: int, *, questions: int, seed: int) -> tuple[list[Doc], list[Question], list[Chunk]]:
    """benchmarks/search.py's tree of `total` nodes under /references, with its questions."""
    build, chunks = searchtree.plan_chunks(total, questions=questions, seed=seed)
    chunks = list(chunks)  # the questions are known once every chunk has been made
    docs = []
    for chunk in chunks:
        pending = [(chunk.parent_path, spec) for spec in chunk.specs]
        while pending:
            parent, spec = pending.pop()
            path = f"{parent}/{spec.name}"
            if spec.type == "document":
                docs.append(Doc(path, "document", spec.description, spec.content.decode()))
            pending.extend((path, child) for child in spec.children)
    by_path = {doc.path: doc for doc in docs}
    asked = []
    for question in build.questions:
        value = ANSWER.match(question.answer)["value"]
        evidence = _line_evidence(question.path, by_path[question.path].text, question.answer, value)
        asked.append(Question(question.text, "tree", value, (value,), (evidence,)))
    return docs, asked, chunks


# --- the whole corpus -------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    sessions: int = SESSIONS
    people: int = PEOPLE_COUNT
    notes: int = NOTES
    projects: int = PROJECTS
    tree_nodes: int = TREE_NODES
    quotas: tuple[tuple[str, int], ...] = tuple(QUOTAS.items())

    @classmethod
    def scaled(cls, scale: float) -> Sizes:
        def times(value: int) -> int:
            return max(1, round(value * scale))

        return cls(
            sessions=times(SESSIONS),
            people=min(len(PEOPLE), max(2, times(PEOPLE_COUNT))),
            notes=times(NOTES),
            projects=times(PROJECTS),
            tree_nodes=max(50, times(TREE_NODES)),
            quotas=tuple((category, times(count)) for category, count in QUOTAS.items()),
        )


def generate(seed: int = 7, sizes: Sizes = Sizes()) -> Corpus:
    """The corpus and its questions: the same seed and sizes give the same corpus."""
    rng = random.Random(seed)
    quotas = dict(sizes.quotas)
    sessions, asked, unanswerable = conversations(rng, sessions=sizes.sessions, people=sizes.people)
    note_docs, note_questions = notes(rng, sizes.notes)
    project_docs, project_questions, names = projects(rng, sizes.projects)
    tree_docs, tree_questions, chunks = tree(sizes.tree_nodes, questions=quotas["tree"], seed=seed)
    candidates = [
        *asked,
        *(Question(text, "unanswerable", "", (), ()) for text in unanswerable),
        *note_questions,
        *project_questions,
    ]
    unique = list({question.text: question for question in candidates}.values())
    chosen = []
    for category in CATEGORIES[:-1]:
        pool = [question for question in unique if question.category == category]
        chosen += rng.sample(pool, min(quotas[category], len(pool)))
    chosen += tree_questions
    rng.shuffle(chosen)
    return Corpus(
        docs=[*sessions, *note_docs, *project_docs, *tree_docs], questions=chosen, tree_chunks=chunks, projects=names
    )
