"""The one rule every app's one-line names follow: node names, agent names and models, the roles
of a reasoning graph's turns. Each app adds its own rules on top."""

import unicodedata

# Control, format (zero-width, bidirectional overrides), surrogate, private-use, unassigned and
# line/paragraph separator characters: invisible or misleading in a name.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def has_invisible_characters(text: str) -> bool:
    """Whether `text` holds a control or invisible character (`REFUSED_CATEGORIES`)."""
    return any(unicodedata.category(char) in REFUSED_CATEGORIES for char in text)


EXCERPT_CHARACTERS = 60


def excerpt(text: str, limit: int = EXCERPT_CHARACTERS) -> str:
    """`text` quoted and escaped for a message, cut to its first `limit` characters: a refusal
    names what it refuses without echoing a name of any length back."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"
