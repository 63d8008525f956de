"""A text on one line, cut to a length: how a prompt, a label or a summary quotes what may be
long. Pure: no Django, no database. Explained in docs/text.md."""


def one_line(text: str, limit: int) -> str:
    """`text` with each run of whitespace (line breaks among them) made one space, cut to `limit`
    characters, the last of them an ellipsis, when it is longer."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"
