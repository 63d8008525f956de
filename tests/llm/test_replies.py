import pytest
from pydantic import BaseModel

from memsite.llm.replies import ReplyInvalid, json_candidates, parse_reply


class Point(BaseModel):
    x: int
    y: int


@pytest.mark.parametrize(
    "text",
    [
        '{"x": 1, "y": 2}',
        'Here it is: {"x": 1, "y": 2}. Done.',
        '```json\n{"x": 1, "y": 2}\n```',
        '```\n{"x": 1, "y": 2}\n```',
        'First a list [1, 2] then {"note": "not it"} and {"x": 1, "y": 2}',
        'Broken {"x": 1, then good {"x": 1, "y": 2}',
    ],
)
def test_the_first_valid_json_is_taken(text):
    assert parse_reply(text, Point) == Point(x=1, y=2)


def test_no_json_says_so():
    with pytest.raises(ReplyInvalid, match="no JSON"):
        parse_reply("I cannot help with that.", Point)


def test_schema_errors_name_the_fields():
    with pytest.raises(ReplyInvalid) as raised:
        parse_reply('{"x": "a"}', Point)
    assert "- x:" in str(raised.value) and "- y: Field required" in str(raised.value)


def test_candidates_are_bounded():
    assert len(json_candidates("[1] " * 1000)) == 16
