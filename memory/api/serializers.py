"""Serializers shared by the memory API's views and by the tools (tools/definitions/), which answer
in the same shapes: the two output forms of a node and its input fields, a retrieved passage, what
a search spent, and a question a search put to the user."""

import datetime
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory import selectors
from memory.index.times import TIME_BOOST
from memory.logic.dates import iso_date
from memory.models import Node, SearchQuestion
from memory.types import all_types
from memsite.serializers import StrictCharField

DATE_HELP = (
    "The day its content speaks of (a session's, a meeting's), in ISO 8601: 2023-05-08, or a date and time "
    "(2023-05-08T14:02:00+02:00), of which the day is kept as written. Null when none was given: the index "
    "then reads one from its description or its text's first lines."
)


def node_id_field(**kwargs: Any) -> StrictCharField:
    kwargs.setdefault("help_text", "A node id, such as `memory_<32 hex>`.")
    return StrictCharField(max_length=64, **kwargs)


def type_field(**kwargs: Any) -> StrictCharField:
    known = ", ".join(memory_type.name for memory_type in all_types())
    kwargs.setdefault("help_text", f"A memory type. Known types: {known}.")
    return StrictCharField(**kwargs)


@extend_schema_field(OpenApiTypes.DATE)
class IsoDateField(StrictCharField):
    """A day, as `memory.logic.dates.iso_date` reads it: an ISO 8601 date, or a date and time."""

    def to_internal_value(self, data: Any) -> datetime.date:  # type: ignore[override]
        try:
            return iso_date(super().to_internal_value(data))
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: datetime.date) -> str:  # type: ignore[override]
        return value.isoformat()


def context_field(**kwargs: Any) -> serializers.DictField:
    kwargs.setdefault(
        "help_text",
        "The type's context, an object checked against the type's schema "
        '(project_file_bytes: {"file_path": "relative/path"}; other types: {}).',
    )
    return serializers.DictField(**kwargs)


class NodeSerializer(serializers.Serializer):
    """The list form of a node. Its `path` comes from the serializer context key `ancestors`
    (root-first nodes above every serialized node), so a list costs no query per node."""

    id = serializers.CharField(read_only=True)
    name = serializers.CharField(read_only=True)
    type = serializers.CharField(read_only=True)
    is_folder = serializers.BooleanField(read_only=True)
    description = serializers.CharField(read_only=True)
    # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
    context: dict[str, Any] = serializers.DictField(read_only=True)  # type: ignore[assignment]
    # A field, not the Field attribute of that name: DRF's metaclass takes it off the class.
    parent = serializers.CharField(source="parent_id", read_only=True, allow_null=True)  # type: ignore[assignment]
    path = serializers.SerializerMethodField(help_text="Readable path, such as /user/user_preferences.md.")
    child_count = serializers.IntegerField(source="numchild", read_only=True)
    content_size = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Bytes of content; null for nodes that hold none."
    )
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)
    version = serializers.IntegerField(
        read_only=True, help_text="Bumped by every change; send it back to update optimistically."
    )
    created_by = serializers.SerializerMethodField(help_text="Username of the creator, if any.")
    mode = serializers.SerializerMethodField(
        help_text='A project file\'s permission bits in octal, such as "0755", as its archive gave '
        "them and its export gives them back; null for other nodes."
    )
    date = serializers.DateField(read_only=True, allow_null=True, help_text=DATE_HELP)

    class Meta:
        ref_name = "NodeListItem"

    def to_representation(self, node: Node) -> dict[str, Any]:
        # Written out by hand: children pages are the hottest read of the API, and DRF's generic
        # walk over the declared fields (which still define the schema) costs twenty times more.
        timestamp = self.fields["created_at"].to_representation
        return {
            "id": node.id,
            "name": node.name,
            "type": node.type,
            "is_folder": node.is_folder,
            "description": node.description,
            "context": node.context,
            "parent": node.parent_id,
            "path": self.get_path(node),
            "child_count": node.numchild,
            "content_size": getattr(node, "content_size", None),
            "created_at": timestamp(node.created_at),
            "updated_at": timestamp(node.updated_at),
            "version": node.version,
            "created_by": self.get_created_by(node),
            "mode": self.get_mode(node),
            "date": node.date.isoformat() if node.date is not None else None,
        }

    def get_path(self, node: Node) -> str:
        ancestors = self.context.get("ancestors")
        if ancestors is None:
            return selectors.node_path(node=node)
        return selectors.node_path(node=node, ancestors=ancestors[: node.depth - 1])

    def get_created_by(self, node: Node) -> str | None:
        return node.created_by.username if node.created_by is not None else None

    def get_mode(self, node: Node) -> str | None:
        return None if node.mode is None else f"{node.mode:04o}"


class NodeDetailSerializer(NodeSerializer):
    """The full form of one node, with its children's ids in order (seed 000's `children_ids`)."""

    children_ids = serializers.SerializerMethodField()

    class Meta:
        ref_name = "Node"

    def get_children_ids(self, node: Node) -> list[str]:
        return selectors.node_children_ids(node=node)

    def to_representation(self, node: Node) -> dict[str, Any]:
        return {**super().to_representation(node), "children_ids": self.get_children_ids(node)}


class NodePageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last one.")
    previous = serializers.URLField(allow_null=True)
    results = NodeSerializer(many=True)

    class Meta:
        ref_name = "NodePage"


class ExpansionSerializer(serializers.Serializer):
    start = serializers.IntegerField(help_text="Character offset of the first passage in the node's text.")
    end = serializers.IntegerField(
        help_text="Past the last passage: the node's text from start to end (memory_read at offset start) is the "
        "span as the node has it."
    )
    text = serializers.CharField(
        help_text="The passages in order, a blank line between two that do not touch in the node's text."
    )
    tokens = serializers.IntegerField(
        help_text="What the budget held: the passages' tokens and the blank lines', counted one by one (counted "
        "whole, the text has as many or a few fewer). Over the budget only when the hit's passage alone is."
    )

    class Meta:
        ref_name = "RetrieveExpansion"


class HitSerializer(serializers.Serializer):
    class ScoresSerializer(serializers.Serializer):
        fulltext = serializers.FloatField(allow_null=True, help_text="Its full-text score, if that ranking found it.")
        vector = serializers.FloatField(allow_null=True, help_text="Its cosine to the query, if that ranking found it.")

        class Meta:
            ref_name = "RetrieveScores"

    node = serializers.CharField(source="node_id")
    path = serializers.CharField(help_text="The node's readable path.")
    type = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="label: the node's name and description; content: a piece of its text.")
    start = serializers.IntegerField(help_text="Character offset of the passage in the node's text.")
    end = serializers.IntegerField()
    snippet = serializers.CharField()
    score = serializers.FloatField(
        help_text=f"Reciprocal-rank fusion of the two rankings, raised by {TIME_BOOST:.0%} for a passage dated in "
        "the time the query names (or saying a time, for a question asking when)."
    )
    scores = ScoresSerializer(source="*")
    expanded = ExpansionSerializer(
        allow_null=True,
        help_text="Asked with expand_tokens, a content hit's passage with its neighbours in the node; null "
        "otherwise, and for a label hit.",
    )
    date = serializers.DateField(
        allow_null=True,
        help_text="The day the passage speaks of: the last dated line's above it in its node's text, else its "
        "node's date; null when nothing dates it.",
    )

    class Meta:
        ref_name = "RetrieveHit"


class SearchSpentSerializer(serializers.Serializer):
    llm_calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField(help_text="An estimate from the model table's prices.")

    class Meta:
        ref_name = "SearchSpent"


class SearchQuestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    search = serializers.IntegerField(source="search_id")
    questions = serializers.ListField(child=serializers.CharField(), help_text="What the search could not answer.")
    status = serializers.ChoiceField(choices=SearchQuestion.Status.choices)
    answer = serializers.CharField()
    answered_by = serializers.SerializerMethodField()
    answered_at = serializers.DateTimeField(allow_null=True)
    document = serializers.CharField(
        source="document_id", allow_null=True, help_text="The node in `user` that keeps the answer."
    )
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "SearchQuestion"

    def get_answered_by(self, question: SearchQuestion) -> str | None:
        return question.answered_by.username if question.answered_by is not None else None
