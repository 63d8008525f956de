"""What a reflection recalls and the thought the offline reflection writes from it, with no
model: `agents.brains.logic.thoughts`, and how the reflection's request carries them."""

import pytest

from agents.brains.logic.concepts import key_terms
from agents.brains.logic.thoughts import REHEARSED, Acted, Place, Recall, offline_thought, recalled
from agents.brains.services.prompts import Reflection, recall_lines
from memsite.text.reading import Reading

GOAL = "Find which HTTP status code the todo API answers"
CODES = Place("/references/http-status-codes.md", "Which HTTP status code to answer for created resources.")
APP = Place("/projects/todo-api/app.py", "A Flask app: POST /todos answers 201.")
FOLDER = Place("/references", "Listed /references: 2 children: flask-quickstart.md, http-status-codes.md.")
READ = Acted(action="read_file", ok=True, result="Read /references/flask.md (150 bytes): Notes on Flask routes.")


def test_a_thought_says_what_the_tick_did_then_its_goal_what_it_recalled_and_how_far_it_got():
    thought = offline_thought(READ, Recall(goal=GOAL, places=(CODES, APP, FOLDER), touching=3, looked_at=7))

    assert thought == (
        "I read /references/flask.md (150 bytes): Notes on Flask routes. "
        f'For my goal "{GOAL}", I recalled /references/http-status-codes.md (Which HTTP status code to answer '
        "for created resources) and /projects/todo-api/app.py (A Flask app: POST /todos answers 201): "
        "3 of the 7 places I explored touch on it."
    )


def test_a_tick_that_did_nothing_thinks_of_its_goal_not_of_idling():
    idle = Acted(action="idle", ok=True, result="Idled.")

    thought = offline_thought(idle, Recall(goal=GOAL, places=(FOLDER,), touching=1, looked_at=4))

    assert thought.startswith(f'Nothing new was left to explore. For my goal "{GOAL}", I recalled /references (2 ')
    assert "idle" not in thought.lower() and "Listed /references" not in thought  # the place is not named twice
    one = offline_thought(idle, Recall(goal=GOAL, places=(FOLDER,), touching=1, looked_at=1))
    assert one.endswith("http-status-codes.md): the one place I explored touches on it.")
    few = offline_thought(idle, Recall(goal=GOAL, places=(FOLDER,), touching=1, looked_at=4))
    assert few.endswith(": 1 of the 4 places I explored touches on it.")
    nothing = offline_thought(idle, Recall(goal=GOAL, looked_at=4))
    assert nothing.endswith(f'For my goal "{GOAL}", nothing I explored touches on it yet (4 places so far).')
    assert offline_thought(idle, Recall(goal=GOAL)).endswith("I have explored nothing yet.")


def test_without_a_goal_a_thought_says_what_it_reflected_on():
    assert offline_thought(READ, Recall(goal=None, places=(CODES,), looked_at=3)).endswith(
        "I have no goal, so I reflected on /references/http-status-codes.md "
        "(Which HTTP status code to answer for created resources)."
    )
    assert offline_thought(READ, Recall(goal=None)).endswith("I have no goal, and nothing explored to reflect on yet.")


def test_a_failure_or_no_decision_is_said_as_it_was():
    failed = Acted(action="read_file", ok=False, result="read_file failed: No memory node at '/gone'.")
    undecided = Acted(action="", ok=False, result="No valid action was decided: bad JSON")
    empty = Acted(action="read_file", ok=True, result="Read /a.py (0 bytes): ")

    assert offline_thought(failed, Recall(goal=None)).startswith("That failed: No memory node at '/gone'. ")
    assert offline_thought(undecided, Recall(goal=None)).startswith("No valid action was decided: bad JSON. ")
    assert offline_thought(empty, Recall(goal=None)).startswith("I read /a.py (0 bytes). ")


@pytest.mark.parametrize(
    "acted",
    [
        Acted(action="idle", ok=True, result="Idled."),
        Acted(action="list_dir", ok=True, result="Listed /a: 1 child: b/."),
        Acted(action="read_file", ok=True, result="Read /a/b.md (12 bytes, cut to the read budget): "),
        Acted(action="read_file", ok=False, result="read_file failed: /a."),
    ],
)
@pytest.mark.parametrize(
    "recall",
    [
        Recall(goal="", places=(Place("/a", ""), Place("/b", "Listed /b: 2 children: c, d.")), touching=2, looked_at=5),
        Recall(goal="", looked_at=5),
        Recall(goal=None, places=(Place("/a", ""),), looked_at=1),
        Recall(goal=None),
    ],
)
def test_the_frame_of_an_offline_thought_adds_no_concept(acted, recall):
    assert key_terms(offline_thought(acted, recall)) == []


def test_a_recall_is_the_best_few_and_how_many_touch_on_the_goal():
    places = [Place(f"/p{n}", "") for n in range(10)]

    recall = recalled(GOAL, places, [4, 2, 7, 9])

    assert [place.key for place in recall.places] == ["/p4", "/p2", "/p7"]
    assert (recall.goal, recall.touching, recall.looked_at) == (GOAL, 4, 10)
    assert recalled(GOAL, places, []).places == ()
    # With no goal and nothing that touches on what the tick did: the places explored last.
    assert [place.key for place in recalled(None, places, []).places] == ["/p0", "/p1", "/p2"]


def test_ticks_that_did_nothing_go_over_the_best_places_in_turn():
    places = [Place(f"/p{n}", "") for n in range(10)]
    found = list(range(10))

    turns = [[place.key for place in recalled(GOAL, places, found, turn=turn).places] for turn in range(REHEARSED + 1)]

    assert turns[1] == ["/p1", "/p2", "/p3"]
    assert turns[REHEARSED - 1] == [f"/p{REHEARSED - 1}", "/p0", "/p1"]  # wraps round the best REHEARSED
    assert turns[REHEARSED] == turns[0]


def test_the_offline_reflection_thinks_from_what_the_prompt_was_given():
    recall = Recall(goal=GOAL, places=(CODES, APP), touching=2, looked_at=9)

    reply = Reflection.offline_reply(purpose="reflect", reading=Reading(query="", context="", given=(READ, recall)))

    assert reply["thought"] == offline_thought(READ, recall)
    assert recall_lines(recall)[1].startswith("Recalled for the goal (2 of the 9 places you explored touch on it):\n- ")
    # A request that came without it (a model server's prose only): nothing done, no goal.
    bare = Reflection.offline_reply(purpose="reflect", reading=Reading(query="", context=""))
    assert bare["thought"] == offline_thought(Acted(action="", ok=False, result=""), Recall(goal=None))
