"""The ledger's one write: recording a gateway call."""

import functools
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import connections, models, router
from django.db.models.sql import InsertQuery

from memsite.errors import InvalidInput
from memsite.llm.models import LLMCall
from memsite.spaces.principals import Principal

MAX_TEXT = 1_000_000  # characters kept of a reply or an error; the ledger is not an archive


def served_key(served: models.Model | None) -> tuple[ContentType | None, int | None]:
    """The (type, id) pair a ledger row links to, validated before any request is made."""
    if served is None:
        return None, None
    if not isinstance(served, models.Model) or served.pk is None:
        raise InvalidInput("A call can serve only a saved row.")
    try:
        served_id = int(served.pk)
    except (TypeError, ValueError):
        raise InvalidInput("A call can serve only a row with an integer primary key.") from None
    return ContentType.objects.get_for_model(served), served_id


@functools.cache
def _prepared_insert(alias: str) -> tuple[str, list[models.Field], Any]:
    """The ledger's INSERT ... RETURNING id, compiled by Django once per database rather than on
    every call: compiling it was half the gateway's own time per call."""
    fields = [field for field in LLMCall._meta.concrete_fields if field is not LLMCall._meta.pk]
    query = InsertQuery(LLMCall)
    query.insert_values(fields, [LLMCall()])
    compiler = query.get_compiler(using=alias)
    compiler.returning_fields = [LLMCall._meta.pk]
    [(sql, _params)] = compiler.as_sql()
    return sql, fields, compiler.returning_params


def _insert(call: LLMCall) -> None:
    """What `call.save()` does for a new row, with the SQL compiled once (see above). One INSERT
    is atomic by itself; a transaction around it would add a BEGIN to every LLM call."""
    connection = connections[router.db_for_write(LLMCall)]
    sql, fields, returning_params = _prepared_insert(connection.alias)
    params = [field.get_db_prep_save(field.pre_save(call, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *returning_params])
        (call.pk,) = connection.ops.fetch_returned_insert_columns(cursor, returning_params)
    call._state.adding = False
    call._state.db = connection.alias


def llm_call_record(
    *,
    purpose: str,
    provider: str,
    model: str,
    ok: bool,
    messages: Sequence[dict[str, Any]],
    reply: str,
    prompt_tokens: int,
    completion_tokens: int,
    tokens_reported: bool,
    tokens_approximate: bool,
    latency_ms: int,
    cost_usd: Decimal,
    retries: int,
    repairs: int,
    response_mode: str,
    schema_name: str,
    error_reason: str = "",
    error: str = "",
    by: Principal,
    served: models.Model | None = None,
) -> LLMCall:
    """The ledger's row of a call made for `by`: its user (or memsite itself), space and token."""
    served_type, served_id = served_key(served)
    call = LLMCall(
        purpose=purpose,
        provider=provider,
        model=model[:128],
        status=LLMCall.Status.OK if ok else LLMCall.Status.ERROR,
        error_reason=error_reason,
        error=error[:MAX_TEXT],
        prompt_tokens=max(prompt_tokens, 0),
        completion_tokens=max(completion_tokens, 0),
        tokens_reported=tokens_reported,
        tokens_approximate=tokens_approximate,
        latency_ms=max(latency_ms, 0),
        cost_usd=cost_usd,
        retries=retries,
        repairs=repairs,
        response_mode=response_mode,
        schema_name=schema_name[:128],
        messages=list(messages),
        reply=reply[:MAX_TEXT],
        served_type=served_type,
        served_id=served_id,
        acted_as=LLMCall.ActedAs.SYSTEM if by.is_system else LLMCall.ActedAs.USER,
        user_id=by.user_id,
        space_id=by.space.pk,
        token_id=by.token_id,
    )
    _insert(call)
    return call
