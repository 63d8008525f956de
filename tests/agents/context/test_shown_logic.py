"""The pure parts of what the agent pages show: the assembled messages grouped by tier and
bounded, and what a checkpoint's restore would change of the settings."""

import pytest

from agents.context.logic.assembly import Included
from agents.context.logic.restore import SettingChange, restore_changes
from agents.context.logic.sent import sent_groups


def request(*tiers: str) -> tuple[list[dict], list[Included]]:
    """A message per tier named, numbered in its content, each of 10 tokens."""
    messages = [
        {"role": "system" if tier == "system" else "user", "content": f"m{n}"} for n, tier in enumerate(tiers, 1)
    ]
    included = [
        Included(tier=tier, tokens=10, position=None if tier == "system" else n) for n, tier in enumerate(tiers, 1)
    ]
    return messages, included


def test_messages_are_grouped_in_runs_of_one_tier_in_the_order_sent():
    groups = sent_groups(*request("system", "pinned", "short_term", "short_term", "pinned", "short_term"))

    assert [(group.tier, [m.number for m in group.messages], group.tokens) for group in groups] == [
        ("system", [1], 10),
        ("pinned", [2], 10),
        ("short_term", [3, 4], 20),
        ("pinned", [5], 10),
        ("short_term", [6], 10),
    ]
    assert groups[0].messages[0].position is None and groups[2].messages[1].position == 4
    assert all(group.left_out == 0 for group in groups)


def test_a_long_context_shows_its_first_and_newest_messages_and_counts_the_rest():
    groups = sent_groups(*request("system", *["short_term"] * 99), most=10, first=3)

    shown = [message.number for group in groups for message in group.messages]
    assert shown == [1, 2, 3, 94, 95, 96, 97, 98, 99, 100]
    assert [(group.tier, group.left_out) for group in groups] == [("system", 0), ("short_term", 0), ("short_term", 90)]


def test_content_and_other_fields_are_cut_to_the_bound():
    message = {"role": "assistant", "content": "x" * 2_500, "tool_calls": [{"id": "c1", "arguments": "y" * 3_000}]}

    [group] = sent_groups([message], [Included(tier="short_term", tokens=900, position=7)])

    shown = group.messages[0]
    assert (len(shown.content.text), shown.content.cut) == (2_000, 500)
    assert shown.fields.text.startswith('{\n "tool_calls"') and shown.fields.cut > 0
    assert (shown.role, shown.tokens, shown.position) == ("assistant", 900, 7)


def test_content_parts_are_shown_as_json_and_a_plain_message_has_no_other_fields():
    parts = {"role": "user", "content": [{"type": "text", "text": "look"}]}
    groups = sent_groups([parts, {"role": "user", "content": "hi"}], request("short_term", "short_term")[1])

    first, second = groups[0].messages
    assert '"type": "text"' in first.content.text and first.fields.text == ""
    assert second.content.text == "hi" and second.fields.text == ""


def test_messages_and_report_entries_must_agree():
    with pytest.raises(ValueError, match="2 messages but 1"):
        sent_groups(*request("system", "pinned")[:1], request("system")[1])


def test_a_restore_names_the_settings_it_changes_and_hides_variables_values():
    current = {"model": "gpt-4o", "turn_input_limit": None, "context_variables": {"key": "now"}, "strategy": "fifo"}
    saved = {"model": "gpt-4", "turn_input_limit": 2000, "context_variables": {"key": "then"}, "strategy": "fifo"}

    changes = restore_changes(
        current=current, saved=saved, fields=["model", "turn_input_limit", "context_variables", "strategy"]
    )

    assert changes == [
        SettingChange("model", "gpt-4o", "gpt-4"),
        SettingChange("turn_input_limit", "none", "2000"),
        SettingChange("context_variables", "(values hidden)", "different values"),
    ]


@pytest.mark.parametrize("saved", [None, [], "agent"])
def test_an_unreadable_saved_state_changes_nothing_to_show(saved):
    assert restore_changes(current={"model": "gpt-4"}, saved=saved, fields=["model"]) == []
