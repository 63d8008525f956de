"""Searches (the LLM's walk of the tree, answers with citations) and the questions they put
to the user."""

from collections.abc import Sequence

from memsite_client.flows.base import Call, Flow, Listing, done, fetch, fields, params, poll
from memsite_client.flows.memory import MemoryFlows, NodeRef
from memsite_client.models import Page, Question, Search

MAX_HOLD_S = 30  # the longest ?wait the API takes


class SearchFlows(MemoryFlows):
    def ask(
        self,
        questions: str | Sequence[str],
        *,
        start: NodeRef | None = None,
        context: str = "",
        output: str = "answer",
        fallback: str = "none",
        max_llm_calls: int | None = None,
        max_tokens: int | None = None,
        timeout_s: int | None = None,
        wait: float = 120.0,
        poll_interval: float = 1.0,
        hold: int = MAX_HOLD_S,
    ) -> Flow[Search]:
        """A search for answers, waited for: the search once it has ended, or is waiting for
        the user to answer its question (fallback="ask_user"; see `questions`). WaitTimeout,
        with the search, if it is still running after `wait` seconds. The server holds the
        start request up to `hold` seconds (less behind a proxy with a short timeout; none
        with ask_user); then the search is read every `poll_interval` seconds. max_llm_calls, max_tokens and
        timeout_s are the search's own budgets."""
        start_id = (yield from self.node_id(start)) if start is not None else None
        budgets = fields(max_llm_calls=max_llm_calls, max_tokens=max_tokens, timeout_s=timeout_s)
        body = fields(
            questions=[questions] if isinstance(questions, str) else list(questions),
            context=context,
            start_node=start_id,
            output=output,
            fallback=fallback,
            budgets=budgets or None,
        )
        # The server holds a search waiting for the user as one running: the client polls it.
        hold_s = 0 if fallback == "ask_user" else max(0, min(hold, MAX_HOLD_S, int(wait)))
        call = Call("POST", "searches/", params=params(wait=hold_s or None), json=body, hold_s=hold_s)
        search = yield from fetch(call, Search, self.policy)
        return (
            yield from poll(
                lambda: self.get_search(search.id),
                search,
                running=lambda search: search.running,
                wait=wait,
                every=poll_interval,
                policy=self.policy,
            )
        )

    def get_search(self, search_id: int) -> Flow[Search]:
        return (yield from fetch(Call("GET", f"searches/{search_id}/"), Search, self.policy))

    def cancel_search(self, search_id: int) -> Flow[Search]:
        """A queued or waiting search ends at once, a running one at its next step."""
        return (yield from fetch(Call("POST", f"searches/{search_id}/cancel/"), Search, self.policy))

    def questions(self, *, page_size: int | None = None) -> Listing[Question]:
        """The questions searches wait for the user to answer, newest first."""
        return Listing(done(Call("GET", "questions/", params=params(page_size=page_size))), Page[Question], self.policy)

    def answer(self, question_id: int, text: str) -> Flow[Question]:
        """Answers a search's question: the search goes on with it, and it is kept in `user`."""
        call = Call("POST", f"questions/{question_id}/answer/", json={"answer": text})
        return (yield from fetch(call, Question, self.policy))
