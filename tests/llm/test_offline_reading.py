"""The offline provider as a fallback: sentences ranked by a hybrid score, answers that follow
the best sentence's score, routing by the same score, extractive descriptions."""

import numpy as np
import pytest

from memory.search import prompts
from memory.services.descriptions import describe_prompt
from memsite.llm import similarity
from memsite.llm.gateway import complete
from memsite.llm.providers import offline
from memsite.text.ranking import rank
from memsite.text.units import unit
from memsite.text.words import WORD, roots
from tests.factories import system

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def lexical_only(settings):
    settings.MEMSITE_EMBEDDINGS = "off"


def read(text: str, *questions: str):
    prompt = prompts.read_prompt(
        questions=list(questions), context="", notes=[], node_line="[memory_x] notes.md", text=text
    )
    schema = prompts.read_reply(len(questions))
    return complete(by=system(), purpose="read", messages=prompt.messages, reading=prompt.reading, schema=schema).value


def test_ran_answers_a_question_about_running():
    reply = read(
        "Maya ran the Lisbon marathon in May 2023. She trains on Sundays.", "When did Maya run the Lisbon marathon?"
    )

    [finding] = reply.findings
    assert finding.complete and reply.is_answer
    assert finding.answer.startswith("Maya ran the Lisbon marathon in May 2023.")


def test_a_text_sharing_one_common_word_does_not_answer():
    reply = read(
        "The weather in Oslo was cold all week. We stayed indoors and read.",
        "What was the weather like at Anna's wedding?",
    )

    assert reply.findings == [] and reply.is_answer is False


def test_a_weak_best_sentence_answers_in_part_only():
    reply = read("Anna's wedding was in June, in Porto.", "Was the weather sunny and warm at Anna's wedding?")

    [finding] = reply.findings
    assert not finding.complete and not reply.is_answer
    assert finding.answer == "Anna's wedding was in June, in Porto."


def test_a_table_row_is_read_under_its_heading():
    text = (
        "# HTTP status codes\n\n| code | meaning |\n| 404 | not found |\n"
        "| 409 | conflicts with the current state of the resource |"
    )

    reply = read(text, "Which HTTP status code means a conflicting resource?")

    assert reply.is_answer
    assert "| 409 | conflicts with the current state of the resource |" in reply.findings[0].answer
    assert "404" not in reply.findings[0].answer


def test_each_question_is_answered_from_its_own_sentences():
    reply = read(
        "Ana adopted a greyhound named Pixel. Bo moved to Lyon for a job at a bakery.",
        "What is the name of Ana's greyhound?",
        "Why did Bo move to Lyon?",
    )

    answers = {finding.question: finding.answer for finding in reply.findings}
    assert answers[1].startswith("Ana adopted a greyhound named Pixel.") and "Lyon" not in answers[1]
    assert answers[2].startswith("Bo moved to Lyon")


def route(questions: list[str], labels: list[str]):
    options = [prompts.Option(f"memory_{number}", label) for number, label in enumerate(labels)]
    prompt = prompts.route_prompt(questions=questions, context="", notes=[], where="/", options=options)
    schema = prompts.route_reply(len(options))
    return complete(by=system(), purpose="route", messages=prompt.messages, reading=prompt.reading, schema=schema).value


def test_the_router_reads_each_options_matched_snippet():
    labels = [
        prompts.option_label("session-1", "Chat between Ana and Bo, 2024-03-01"),
        prompts.option_label(
            "session-2", "Chat between Ana and Bo, 2024-03-08", snippet="Bo: I finally bought the red kayak."
        ),
        prompts.option_label(
            "session-3", "Chat between Ana and Bo, 2024-03-15", snippet="Ana: the weather was lovely."
        ),
    ]

    reply = route(["What colour was the kayak?"], labels)

    assert reply.choice == 2 and reply.unviable == [1, 3]


def test_routing_takes_the_best_option_for_any_of_the_questions():
    labels = ["databases: PostgreSQL tuning notes", "frontend: CSS tokens and styling", "celery: worker pools"]

    reply = route(["How are CSS tokens named?", "What is the celery pool size?"], labels)

    assert reply.choice in (2, 3) and reply.unviable == [1]


def test_option_labels_carry_the_snippet_on_one_line_and_option_score_counts_it():
    snippet = "first line\n" + "word " * 100
    label = prompts.option_label("notes.md", "My   notes", snippet=snippet)

    assert label.startswith("notes.md: My notes | matched: first line word")
    assert "\n" not in label and len(label.split(" | matched: ", 1)[1]) == prompts.SNIPPET_CHARS
    assert prompts.option_label("notes.md", "", snippet="kayak") == "notes.md | matched: kayak"
    wanted = frozenset(roots("kayak"))
    assert (
        prompts.option_score("notes.md | matched: a red kayak", wanted) > prompts.option_score("notes.md", wanted) == 0
    )


class FakeModel:
    """An embedder whose vectors say which texts mean the same: one axis per meaning."""

    name = "fake"

    def __init__(self, meanings: dict[str, int]):
        self.meanings = meanings

    def embed(self, texts):
        vectors = np.zeros((len(texts), 8), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors[row, self.meanings.get(text, 7)] = 1.0
        return vectors


def test_embeddings_raise_a_paraphrase_sharing_no_word(monkeypatch):
    question = "Where did Tom purchase his bike?"
    paraphrase = "He got the cycle from a little store near the station."
    monkeypatch.setattr(similarity, "local_model", lambda: FakeModel({question: 0, paraphrase: 0}))
    text = f"Tom cooks pasta on Fridays.\n{paraphrase}"

    reply = read(text, question)

    assert reply.is_answer and reply.findings[0].answer == paraphrase


def test_embeddings_never_demote_a_sentence_holding_the_question(monkeypatch):
    question = "Which port does Redis listen on?"
    monkeypatch.setattr(similarity, "local_model", lambda: FakeModel({question: 0}))  # nothing else is close

    assert read("Redis listens on port 6379.", question).is_answer


def test_without_the_local_model_the_score_is_lexical(settings):
    settings.MEMSITE_EMBEDDINGS = "server"  # a server's embeddings are never fetched by an offline call
    assert similarity.local_model() is None and similarity.cosines("kayak", ["a red kayak"]) is None
    units = [unit("a red kayak"), unit("a blue boat")]
    assert [scored.score for scored in rank("kayak", units, cosines=similarity.cosines)] == [1.0, 0.0]


def describe(text: str) -> str:
    prompt = describe_prompt("notes.md", text)
    return complete(by=system(), purpose="describe", messages=prompt.messages, reading=prompt.reading).value


def test_the_description_is_key_terms_and_the_most_representative_sentence():
    text = (
        "Kayak trip log.\n"
        "Day one: we paddled the kayak along the river to the lake.\n"
        "Lunch was bread.\n"
        "Day two: the kayak leaked, so we paddled back down the river early.\n"
        "Ana and Bo paddled the kayak on the river and lake for two days in June."
    )

    description = describe(text)

    assert description.startswith("kayak, paddled, river")
    assert description.endswith("Ana and Bo paddled the kayak on the river and lake for two days in June.")
    assert {word for word in WORD.findall(description.lower())} <= set(WORD.findall(text.lower()))


def test_a_long_description_is_cut_at_a_word():
    text = " ".join(f"word{number}" for number in range(200)) + "."

    description = describe(text)

    assert len(description) <= offline.DESCRIPTION_CHARS and description.endswith("\u2026")
    assert set(WORD.findall(description)) <= set(WORD.findall(text))
