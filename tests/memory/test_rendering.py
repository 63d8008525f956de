"""Markdown rendering: the features documents use, sanitizing, and hostile shapes that once took
seconds per preview or raised RecursionError (each now renders or shows as escaped text); and a
search result's snippet, escaped with the query's words marked."""

import html
import re

import pytest

from memory import rendering
from memory.rendering import markdown_to_html, marked

SIZE = 200_000
PLAIN_TEXT_NOTE = '<p class="muted">Shown as plain text:'


def repeat(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def nested_list(depth: int) -> str:
    return "".join("    " * level + f"- item {level}\n" for level in range(depth))


def nested_quotes(depth: int) -> str:
    return "> " * depth + "deep\n" + "".join(f"quote {level}\n" for level in range(depth))


def text_of(output: str) -> str:
    """The characters a reader sees, tags dropped and entities read."""
    return html.unescape(re.sub(r"<[^>]*>", "", output))


def test_renders_the_features_documents_use():
    document = (
        "# Plan\n\nSome **bold**, *emphasis*, `code` and ~~dropped~~ words.[^1]\n\n"
        "| step | owner |\n|------|-------|\n| one  | ops   |\n\n"
        "```python\nprint('hi')\n```\n\n- a\n- b\n\n1. first\n2. second\n\n> quoted\n\n"
        "[docs](https://example.com/docs) and https://example.org\n\n[^1]: A note.\n"
    )
    output = markdown_to_html(document)
    for expected in (
        "<h1>Plan</h1>",
        "<strong>bold</strong>",
        "<em>emphasis</em>",
        "<code>code</code>",
        "<del>dropped</del>",
        "<th>step</th>",
        "<td>ops</td>",
        '<code class="language-python">',
        "<li>a</li>",
        "<ol>",
        "<blockquote>",
        'href="https://example.com/docs"',
        'href="https://example.org"',
        'id="fn-1"',
        'href="#fn-1"',
    ):
        assert expected in output, expected
    assert PLAIN_TEXT_NOTE not in output


def test_sanitizes_raw_html_links_and_ids():
    output = markdown_to_html(
        '<script>alert(1)</script>\n\n<p onclick="x()" id="tree-roots">hi</p>\n\n'
        "[click](javascript:alert(1)) ![x](https://evil.example/x.png) "
        '<a href="https://example.com" onclick="steal()" id="main">ok</a>\n'
    )
    assert "<script" not in output and "onclick" not in output and "javascript:" not in output
    assert "<img" not in output and "evil.example" not in output
    assert '<a href="https://example.com" id="fnmain" rel="noopener noreferrer nofollow">ok</a>' in output
    assert 'id="tree-roots"' not in output


@pytest.mark.parametrize(
    "document",
    [
        repeat("["),
        repeat("[^"),
        repeat("[^a]"),
        repeat("<div>"),
        repeat("<div>\n"),
        repeat(">"),
        repeat("> - "),
        repeat("1. "),
        repeat("* - + "),
        repeat("*"),
        repeat("_"),
        repeat("*a"),
        repeat("*_"),
        repeat("`"),
        repeat("`a``"),
        repeat("[a]("),
        repeat("[a](https://example.com) "),
        repeat("[[]("),
        repeat("!["),
        repeat("[*_`<"),
        repeat("&#"),
        repeat('"'),
        repeat("- [ ] x\n"),
        repeat("x\n"),
        repeat("- x\n"),
        ("| a | b |\n|---|---|\n" + repeat("| x | y |\n"))[:SIZE],
        repeat("<script>alert(1)</script><img src=x onerror=alert(1)>"),
    ],
    ids=lambda document: repr(document[:12]),
)
def test_hostile_shapes_of_200_kb_render_sanitized_and_bounded(document):
    output = markdown_to_html(document)
    assert "<script" not in output and "<img" not in output
    assert not re.search(r"<[a-z][^>]*\son\w+\s*=", output)  # no tag with an event handler
    assert len(output) < 6 * len(document)
    if output.startswith(PLAIN_TEXT_NOTE):
        assert output.endswith("</pre>")
        assert text_of(output.split("<pre>", 1)[1]) == document


def test_a_document_over_the_markup_bound_is_escaped_text_without_rendering(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the renderer was called")

    monkeypatch.setattr(rendering.cmarkgfm, "markdown_to_html_with_extensions", refuse)
    document = "<b>" + repeat("[", rendering.MAX_MARKUP_CHARS)
    output = markdown_to_html(document)
    assert output.startswith(PLAIN_TEXT_NOTE) and "markup characters" in output
    assert "<pre>&lt;b&gt;[[[" in output


def test_a_document_over_the_line_bound_is_escaped_text():
    output = markdown_to_html(repeat("# x\n", 4 * (rendering.MAX_LINES + 1)))
    assert output.startswith(PLAIN_TEXT_NOTE) and "lines" in output and "<h1>" not in output


@pytest.mark.parametrize("document", [nested_list(300), nested_quotes(300)], ids=["list", "blockquote"])
def test_nesting_300_deep_shows_as_text_with_every_line(document):
    output = markdown_to_html(document)
    assert output.startswith(PLAIN_TEXT_NOTE) and "levels deep" in output
    assert text_of(output.split("<pre>", 1)[1]) == document


def test_nesting_a_few_levels_deep_renders():
    output = markdown_to_html(nested_list(12) + "\n" + nested_quotes(12))
    assert PLAIN_TEXT_NOTE not in output
    assert output.count("<ul>") == 12 and output.count("<blockquote>") == 12


def test_a_renderer_failure_shows_escaped_text(monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(rendering.cmarkgfm, "markdown_to_html_with_extensions", broken)
    output = markdown_to_html("# Title\n\n<script>alert(1)</script>")
    assert output.startswith(PLAIN_TEXT_NOTE)
    assert "<pre># Title\n\n&lt;script&gt;alert(1)&lt;/script&gt;</pre>" in output
    assert "could not be rendered" in caplog.text


def test_only_the_start_of_a_long_document_is_rendered():
    document = "# Long\n\n" + repeat("plain words ", rendering.RENDER_LIMIT_CHARS + 5_000)
    output = markdown_to_html(document)
    assert "<h1>Long</h1>" in output
    assert "5,008 more characters are not shown." in output
    assert len(output) < rendering.RENDER_LIMIT_CHARS + 1_000


@pytest.mark.parametrize(
    ("fragment", "depth"),
    [
        ("<p>a</p>", 0),
        ("<ul><li>a<ul><li>b</li></ul></li></ul>", 2),
        ("<div><div></div></div></div></div><div>", 2),
        ("<br><hr><img src=x><p>a<p>b<li>c<li>d", 0),
        ("<DIV><Span>", 2),
    ],
)
def test_html_depth(fragment, depth):
    assert rendering.html_depth(fragment) == depth


def test_marked_escapes_each_piece_and_marks_word_forms():
    html = marked("She moved; moving <b>& MOVES</b> a removed box", "Where did she move?")
    assert html == (
        "She <mark>moved</mark>; <mark>moving</mark> &lt;b&gt;&amp; <mark>MOVES</mark>&lt;/b&gt; a removed box"
    )
    assert marked("<i>x</i>", "the") == "&lt;i&gt;x&lt;/i&gt;"  # no word to mark: escaped only


def test_marked_marks_the_words_sharing_a_root_and_no_others():
    html = marked("We <i>adopted</i> a dog after the movie; adoption & moves", "adoption move")
    assert html == (
        "We &lt;i&gt;<mark>adopted</mark>&lt;/i&gt; a dog after the movie; "
        "<mark>adoption</mark> &amp; <mark>moves</mark>"
    )
