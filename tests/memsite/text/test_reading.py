"""A reading of a question over a text and its options: the best option, the text's sentences
ranked for the question, its keywords and the sentence that stands for it."""

from collections.abc import Sequence

from memsite.text.reading import Option, Reading


def reading(context: str, query: str = "", options: tuple[Option, ...] = (), cosines=None) -> Reading:
    return Reading(query=query, context=context, options=options, cosines=cosines)


def option(position: int, score: float, *, number: int | None = None, key: str | None = None) -> Option:
    return Option(position=position, number=number, key=key, text=f"option {position}", score=score)


def test_the_sentence_paraphrasing_the_question_is_ranked_first():
    text = (
        "Tom's new job started in March.\n"
        "He rides a bicycle to work most days.\n"
        "Tom bought his bicycle at a small shop in Leeds.\n"
        "The shop also sells coffee."
    )

    ranked = reading(text).rank("Where did Tom buy his bicycle?")

    assert ranked[0].text == "Tom bought his bicycle at a small shop in Leeds."


def test_the_best_option_scores_most_ties_going_to_the_first():
    options = (option(0, 0.5), option(1, 0.9), option(2, 0.9), option(3, 0.0))

    read = reading("", options=options)

    assert read.best == options[1]
    assert [item.position for item in read.ranked_options] == [1, 2, 0, 3]
    assert reading("").best is None


def test_an_option_is_known_by_its_key_else_its_number_else_its_text():
    assert option(0, 0, number=3, key="memory_ab").ref == "memory_ab"
    assert option(0, 0, number=3).ref == "3" and option(4, 0).ref == "option 4"
    assert option(0, 0, number=3).index == 3 and option(4, 0).index == 4


def test_relevant_sentences_come_in_the_texts_order_and_share_a_term():
    text = "Ana lives in Porto. Bo bought a kayak. The kayak is red. Rain fell."

    read = reading(text, query="red kayak")

    assert read.relevant(2) == ["Bo bought a kayak.", "The kayak is red."]
    assert read.relevant(4) == read.relevant(3) == ["Bo bought a kayak.", "The kayak is red."]  # Rain holds none
    assert read.lead(2) == ["Ana lives in Porto.", "Bo bought a kayak."]


def test_the_body_leaves_out_headings_and_the_node_line():
    read = reading("Node: notes.md\n# Boats\nThe kayak is red.")

    assert [item.text for item in read.body] == ["The kayak is red."]
    assert [item.text for item in read.units] == ["Node: notes.md", "# Boats", "The kayak is red."]


def test_the_representative_sentence_shares_most_with_the_whole():
    text = (
        "Kayak trip log.\n"
        "Day one: we paddled the kayak along the river to the lake.\n"
        "Lunch was bread.\n"
        "Ana and Bo paddled the kayak on the river and lake for two days in June.\n"
        "Bread, cheese, apples, grapes, olives and a bottle of wine were packed in the big cooler box."
    )

    assert reading(text).representative() == "Ana and Bo paddled the kayak on the river and lake for two days in June."
    assert reading("").representative() == ""


def test_confidence_follows_the_best_option_else_the_best_sentence():
    assert reading("", options=(option(0, 1.0),)).confidence == 0.5
    assert reading("A red kayak.", query="kayak").confidence == 1.0
    assert reading("A red kayak.", query="boat").confidence == 0.0


def test_keywords_are_the_contexts_frequent_words_else_the_querys():
    assert reading("Kayak, kayak, lake.", query="boats").keywords == ("kayak", "lake")
    assert reading("", query="boats").keywords == ("boats",)


def test_the_reading_ranks_with_its_cosines_once_a_question():
    paraphrase = "He got the cycle from a little store."
    calls: list[str] = []

    def cosines(query: str, texts: Sequence[str]) -> list[float]:
        calls.append(query)
        return [1.0 if text == paraphrase else 0.0 for text in texts]

    read = reading(f"Tom cooks pasta.\n{paraphrase}", cosines=cosines)

    assert read.rank("Where did Tom purchase his bike?")[0].text == paraphrase
    assert read.rank("Where did Tom purchase his bike?")[0].text == paraphrase
    assert calls == ["Where did Tom purchase his bike?"]
