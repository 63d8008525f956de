"""The one rule every app's one-line names follow: node names, agent names and models, the roles
of a reasoning graph's turns. Each app adds its own rules on top."""

import unicodedata

# Control, format (zero-width, bidirectional overrides), surrogate, private-use, unassigned and
# line/paragraph separator characters: invisible or misleading in a name.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def has_invisible_characters(text: str) -> bool:
    """Whether `text` holds a control or invisible character (`REFUSED_CATEGORIES`)."""
    return any(unicodedata.category(char) in REFUSED_CATEGORIES for char in text)
