"""Form bodies (memsite.form_bodies): parsed as Django parses them, in memory of a small multiple
of the body, where Python's parse_qsl takes some 80 times a body of percent escapes; bounded in
their number of fields and in the length of a field's name; and, on every form page and the
API, limited to what the view takes (memsite.limits.RequestBodyLimitMiddleware)."""

import random
import tracemalloc
from urllib.parse import quote

import pytest
from django.http import QueryDict
from django.test import Client

from memsite import form_bodies
from memsite.errors import InvalidInput, TooLarge
from memsite.form_bodies import FIELD_NAME_MAX_BYTES, FORM_CONTENT_TYPE, form_fields
from tests.factories import token_for

MiB = 1024 * 1024
# Each `%5B` decodes to one `[`; split by Python's unquote, each is an object of its own.
ESCAPES = b"%5B"


def escapes_body(size: int) -> bytes:
    return b"a=" + ESCAPES * ((size - 2) // len(ESCAPES))


def peak_bytes(call) -> int:
    """The most memory `call()` held at once beyond what it started with (tracemalloc)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


ORDINARY = [
    b"",
    b"a=1",
    b"csrfmiddlewaretoken=abc&username=ada&password=p%40ss+word%21",
    b"a=1&a=2&b=&c",  # repeated names, a blank value, a name without `=`
    b"&&a=1&&",  # empty fields are skipped
    b"q=caf%C3%A9+%E2%82%AC&e=%F0%9F%98%80",  # UTF-8, three and four bytes
    b"bad=%C3%28%FF&half=%E2%82&cut=%",  # invalid UTF-8 is replaced; a cut escape is kept
    b"x=%zz%4&y=%%41&z=a=b=c",  # not escapes; `=` after the first is the value's
    "raw=café&more=€".encode(),  # unescaped UTF-8, as some clients send it
    b"latin=caf\xe9",  # not UTF-8 at all: each byte a Latin-1 character, as Django reads it
    b"plus=a%2Bb+c",
]


@pytest.mark.parametrize("body", ORDINARY, ids=repr)
def test_a_form_reads_as_django_reads_it(body):
    assert list(form_fields(body, max_fields=1000).lists()) == list(QueryDict(body, encoding="utf-8").lists())


def test_escapes_and_characters_cut_between_chunks_read_as_django_reads_them(monkeypatch):
    """Chunks of five bytes: every escape and every multi-byte character crosses a boundary
    somewhere in these bodies."""
    monkeypatch.setattr(form_bodies, "DECODE_CHUNK_BYTES", 5)
    pieces = [b"a", b"=", b"&", b"%", b"+", b"41", b"%C3", b"%A9", "é".encode(), b"%E2%82%AC", b"%F0", b"%%", b"\xff"]
    rng = random.Random(33)
    for _ in range(3000):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        assert list(form_fields(body, max_fields=1000).lists()) == list(QueryDict(body, encoding="utf-8").lists())
    text = "ünïcödé € 😀 " * 50
    body = b"content=" + quote(text).encode()
    assert form_fields(body, max_fields=10)["content"] == text


def test_the_form_is_read_only_as_django_s_is():
    form = form_fields(b"a=1", max_fields=10)
    with pytest.raises(AttributeError):
        form["a"] = "2"


def test_more_fields_than_the_limit_are_refused_before_any_is_decoded():
    assert len(form_fields(b"&".join([b"a=1"] * 10), max_fields=10).getlist("a")) == 10
    with pytest.raises(InvalidInput, match="The form has 11 fields; the limit is 10."):
        form_fields(b"&".join([b"a=1"] * 11), max_fields=10)


def test_a_field_name_past_its_limit_is_refused():
    assert form_fields(b"n" * FIELD_NAME_MAX_BYTES + b"=1", max_fields=10)
    with pytest.raises(TooLarge, match=f"the limit is {FIELD_NAME_MAX_BYTES:,} bytes"):
        form_fields(b"n" * (FIELD_NAME_MAX_BYTES + 1) + b"=1", max_fields=10)


@pytest.mark.parametrize("size", [1 * MiB, 8 * MiB], ids=["1 MiB", "8 MiB"])
def test_percent_escapes_cost_at_most_twice_the_body(size):
    body = escapes_body(size)
    form = None

    def parse():
        nonlocal form
        form = form_fields(body, max_fields=1000)

    assert peak_bytes(parse) <= 2 * len(body)
    assert form["a"] == "[" * ((size - 2) // 3)


# -- through the middleware --------------------------------------------------------------------


@pytest.fixture
def browser(db) -> Client:
    """An anonymous browser that loaded the login page: it has the CSRF cookie, so that the
    CSRF check reads the form it posts."""
    client = Client(enforce_csrf_checks=True)
    assert client.get("/login/").status_code == 200
    return client


def login_post(browser: Client, body: bytes):
    return browser.post("/login/", body, content_type=FORM_CONTENT_TYPE)


def with_token(browser: Client, body: bytes) -> bytes:
    return b"csrfmiddlewaretoken=" + browser.cookies["csrftoken"].value.encode() + b"&" + body


def test_an_anonymous_login_form_over_1_mib_is_refused_from_its_length(browser):
    response = login_post(browser, with_token(browser, escapes_body(2 * MiB)))
    assert response.status_code == 413
    assert response.content.decode().endswith(f"the limit is {MiB} bytes.")


def test_a_login_form_of_too_many_fields_is_refused_and_says_why(browser):
    response = login_post(browser, with_token(browser, b"&".join([b"a=1"] * 1000)))
    assert response.status_code == 400
    assert response.content.decode() == "The form has 1,001 fields; the limit is 1,000."


def test_a_login_form_with_a_field_name_past_its_limit_is_refused(browser):
    response = login_post(browser, with_token(browser, b"n" * (FIELD_NAME_MAX_BYTES + 1) + b"=1"))
    assert response.status_code == 413
    assert "A form field's name is" in response.content.decode()


def test_a_login_form_of_ordinary_size_still_logs_in(browser, user):
    user.set_password("right horse battery")
    user.save()
    body = with_token(browser, f"username={user.username}&password=right+horse+battery".encode())
    response = login_post(browser, body)
    assert response.status_code == 302 and browser.session.get("_auth_user_id") == str(user.pk)


def test_a_login_form_of_escapes_costs_a_small_multiple_of_its_body(browser):
    body = with_token(browser, escapes_body(MiB - 1024))
    assert peak_bytes(lambda: login_post(browser, body)) <= 8 * len(body)


def test_an_api_form_of_escapes_costs_a_small_multiple_of_its_body(db, user):
    """The API's own form parser (DEFAULT_PARSER_CLASSES) reads a form as the pages' do."""
    client = Client(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    body = b"model=gpt-4&name=" + ESCAPES * ((MiB - 1024) // 3)
    response = None

    def post():
        nonlocal response
        response = client.post("/api/agents/", body, content_type=FORM_CONTENT_TYPE)

    assert peak_bytes(post) <= 8 * len(body)
    assert response.status_code == 400 and "name" in response.json()
