"""Plain text tools: a text's content words and their roots, its sentences, their ranking for a
question, and a reading of a question over a text. Pure: no Django, no database, nothing of the
apps. Explained in docs/text.md."""
