"""A small OpenAI-compatible server for tests: POST /v1/chat/completions on 127.0.0.1, answering
from a script of replies queued per test and recording every request it gets. POST /v1/embeddings
answers with `embedding` of each input; a scripted reply, when one is next, gives its status (a
failure's error is sent instead) and its usage (None: no usage in the reply).

    def test_something(fake_openai):
        fake_openai.script(Reply.json({"answer": 42}), Reply.rate_limited(retry_after="0.1"))
        fake_openai.script(Reply.tool_call("memory_read", {"node": "/user"}), Reply.text("Done."))
        ...
        assert fake_openai.requests[0].body["response_format"]["type"] == "json_schema"

The fixtures: `fake_openai` (the server), `openai_gateway` (the gateway's openai provider on
it) and `served_llm` (the same, answering `{}` to whatever a test does not script: calls a model
served, which the daily LLM budgets count). tests/conftest.py loads them for every test."""

import base64
import hashlib
import itertools
import json
import random
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

AUTO = "auto"


@dataclass
class Reply:
    """One scripted answer. Build them with the constructors below."""

    status: int = 200
    content: str | None = ""
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: dict[str, int] | str | None = AUTO  # AUTO: counted from the request and reply
    # Builds the reply's JSON from the request, for replies that depend on what was shown.
    respond: "Callable[[RecordedRequest], Any] | None" = None
    raw: bytes | None = None  # sent as the whole body instead of a completion (see `garbage`)
    content_type: str = "application/json"
    tool_calls: list[dict[str, Any]] | None = None  # the assistant's function calls (see `tool_call`)

    @classmethod
    def text(cls, content: str, **options: Any) -> "Reply":
        return cls(content=content, **options)

    @classmethod
    def tool_call(cls, name: str, arguments: dict[str, Any], call_id: str = "call_1", **options: Any) -> "Reply":
        """The assistant calls the function `name` with `arguments`, as Chat Completions says it."""
        function = {"name": name, "arguments": json.dumps(arguments)}
        return cls(content=None, tool_calls=[{"id": call_id, "type": "function", "function": function}], **options)

    @classmethod
    def json(cls, value: Any, **options: Any) -> "Reply":
        return cls(content=json.dumps(value), **options)

    @classmethod
    def from_request(cls, respond: "Callable[[RecordedRequest], Any]", **options: Any) -> "Reply":
        return cls(respond=respond, **options)

    @classmethod
    def prose(cls, value: Any, **options: Any) -> "Reply":
        return cls(
            content=f"Sure! Here is the result you asked for:\n{json.dumps(value)}\nLet me know if you need more.",
            **options,
        )

    @classmethod
    def fenced(cls, value: Any, **options: Any) -> "Reply":
        return cls(content=f"Here you go.\n```json\n{json.dumps(value, indent=2)}\n```\n", **options)

    @classmethod
    def failure(cls, status: int, message: str = "", **options: Any) -> "Reply":
        return cls(status=status, content=None, error=message or f"HTTP {status}", **options)

    @classmethod
    def rate_limited(cls, retry_after: str | None = "0.1", **options: Any) -> "Reply":
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls.failure(429, "Rate limit reached.", headers=headers, **options)

    @classmethod
    def reject_json_schema(cls) -> "Reply":
        return cls.failure(400, "response_format of type json_schema is not supported by this model.")

    @classmethod
    def slow(cls, seconds: float, content: str = "{}", **options: Any) -> "Reply":
        return cls(content=content, delay=seconds, **options)

    @classmethod
    def garbage(
        cls, body: bytes = b"\x00\xff\xfe<html>\x89PNG\r\n\x1a", content_type: str = "application/json", **options: Any
    ) -> "Reply":
        """A 200 whose body is not a chat completion at all (a broken proxy, a wrong base URL)."""
        return cls(raw=body, content_type=content_type, **options)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    @property
    def response_format(self) -> str | None:
        fmt = self.body.get("response_format") if isinstance(self.body, dict) else None
        return fmt.get("type") if isinstance(fmt, dict) else None


def _words(value: Any) -> int:
    return len(json.dumps(value).split()) if value is not None else 0


EMBEDDING_DIMENSIONS = 1536  # what text-embedding-3-small gives when not asked for fewer


def _word_vector(word: str, dimensions: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(f"{dimensions}:{word}".encode()).digest()[:8], "big")
    generator = random.Random(seed)
    return [generator.gauss(0.0, 1.0) for _ in range(dimensions)]


def embedding(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """The fake's embedding of `text`: the sum of a fixed random vector per lower-case word, so
    texts that share words point the same way. Not normalised, as some servers send them."""
    words = re.findall(r"\w+", text.lower()) or [text]
    total = [0.0] * dimensions
    for word in words:
        total = [a + b for a, b in zip(total, _word_vector(word, dimensions), strict=True)]
    return total


class FakeOpenAI:
    """`default`, when given, answers every request the script does not (benchmarks, load runs)."""

    def __init__(self, default: Reply | None = None) -> None:
        self._default = default
        self._lock = threading.Lock()
        self._script: deque[Reply] = deque()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self.requests: list[RecordedRequest] = []
        self.responses: list[dict[str, Any]] = []
        self.unscripted = 0
        # When set, every embedding has this many dimensions, whatever was asked for (a server
        # that ignores `dimensions`).
        self.embedding_dimensions: int | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def answer_unscripted(self, reply: Reply) -> None:
        """From now on, answer with `reply` every request the script does not."""
        with self._lock:
            self._default = reply

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def start(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.start()
        self._thread.join()

    def stop(self) -> None:
        self._stopping.set()  # wakes slow replies so shutdown does not wait for them
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            if self._script:
                return self._script.popleft()
            if self._default is None:
                self.unscripted += 1
            return self._default

    def _completion(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        body = request.body if isinstance(request.body, dict) else {}
        if reply.respond is not None:
            reply = Reply(content=json.dumps(reply.respond(request)), headers=reply.headers, usage=reply.usage)
        if reply.usage == AUTO:
            prompt = sum(_words(message.get("content")) for message in body.get("messages", [])) + 7
            completion = len((reply.content or "").split()) + 1
            usage: dict[str, int] | None = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        else:
            usage = reply.usage  # type: ignore[assignment]
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        completion_body: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                    "logprobs": None,
                }
            ],
        }
        if usage is not None:
            completion_body["usage"] = usage
        return completion_body

    def _next_embedding(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            return self._script.popleft() if self._script else Reply()

    def _embeddings(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        body = request.body if isinstance(request.body, dict) else {}
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        dimensions = self.embedding_dimensions or body.get("dimensions") or EMBEDDING_DIMENSIONS
        data = []
        for index, text in enumerate(texts):
            vector: Any = embedding(str(text), dimensions)
            if body.get("encoding_format") == "base64":
                vector = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": vector})
        response: dict[str, Any] = {"object": "list", "data": data, "model": body.get("model", "unknown")}
        if reply.usage is not None:
            tokens = sum(len(str(text).split()) for text in texts)
            response["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return response

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return type("Handler", (_Handler,), {"fake": self})


@pytest.fixture
def fake_openai():
    """A running FakeOpenAI; stopped after the test."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai_gateway(settings, fake_openai):
    """The gateway's openai provider pointed at the fake server, whose replies each test scripts
    in order; what the provider remembers of servers is forgotten before and after."""
    from memsite.llm.providers.openai import client_for, forget_working_modes

    settings.MEMSITE_LLM_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = fake_openai.url
    forget_working_modes()
    yield fake_openai
    client_for.cache_clear()
    forget_working_modes()


@pytest.fixture
def served_llm(openai_gateway):
    """The openai provider on the fake server, which answers every request a test does not
    script with an empty JSON object: calls a model served, which the daily LLM budgets count
    (the offline provider's count only against their own cap)."""
    openai_gateway.answer_unscripted(Reply.json({}))
    return openai_gateway


class _Handler(BaseHTTPRequestHandler):
    """Answers as the OpenAI API would, from the scripted replies of `fake`."""

    fake: "FakeOpenAI"
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def _send_raw(self, status: int, data: bytes, content_type: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send_failure(self, reply: Reply) -> None:
        """A failing reply's error, in the shape OpenAI sends one."""
        kind = "invalid_request_error" if reply.status < 500 else "server_error"
        payload = {"error": {"message": reply.error, "type": kind, "param": None, "code": None}}
        self._send(reply.status, payload, reply.headers)

    def _answer_embeddings(self, request: RecordedRequest) -> None:
        reply = self.fake._next_embedding(request)
        if reply.status == 200:
            response = self.fake._embeddings(request, reply)
            self.fake.responses.append(response)
            self._send(200, response, reply.headers)
            return
        self._send_failure(reply)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode(errors="replace")
        request = RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        if self.path.rstrip("/") == "/v1/embeddings":
            self._answer_embeddings(request)
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.fake.requests.append(request)
            self._send(404, {"error": {"message": f"No route {self.path}", "type": "not_found"}})
            return
        reply = self.fake._next(request)
        if reply is None:
            self._send(500, {"error": {"message": "No scripted reply left.", "type": "server_error"}})
            return
        if reply.delay and self.fake._stopping.wait(reply.delay):
            return
        if reply.raw is not None:
            self._send_raw(reply.status, reply.raw, reply.content_type)
            return
        if reply.status != 200:
            self._send_failure(reply)
            return
        completion = self.fake._completion(request, reply)
        self.fake.responses.append(completion)
        self._send(200, completion, reply.headers)
