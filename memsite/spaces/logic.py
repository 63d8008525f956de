"""The rules of roles and tokens, without reads or writes: what a role allows, a token's
effective role, who may manage a space, where a token may write, whether it may still be used,
how a key is made and kept, when a new token expires, and that a space keeps an owner."""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

DEFAULT_SPACE = "default"
SPACE_HEADER = "X-Memsite-Space"  # the space a session acts in, by its slug
SESSION_SPACE = "memsite_space"  # the session key of the space the dashboard last switched to
KEY_PREFIX = "ms_"
SHOWN_PREFIX_CHARS = 8  # of the key, kept to tell tokens apart in lists
# last_used_at is written at most this often per token: a busy token costs no write a request.
LAST_USED_EVERY = timedelta(minutes=1)
MAX_EXPIRES_IN_DAYS = 3650  # a key meant to last longer than ten years had better never expire


class Role(StrEnum):
    """Lowest first: each role may do what the ones before it may."""

    READER = "reader"  # read and retrieve
    EDITOR = "editor"  # write memory, run agents and searches
    OWNER = "owner"  # members, settings, tokens: managing the space (a token also needs `manage`)


RANKS = {role: rank for rank, role in enumerate(Role)}
# What a refused role may do, for the message that says what was needed instead.
MAY_ONLY = {
    Role.READER: "Readers can only read",
    Role.EDITOR: "Editors can read and write but not manage the space",
}


def role_allows(role: str | None, needed: str) -> bool:
    """Whether `role` (None: no role at all) may do what `needed` may."""
    return role is not None and RANKS[Role(role)] >= RANKS[Role(needed)]


def role_lower(first: str, second: str) -> Role:
    """The lower of two roles: a token acts with its own role, never above its member's."""
    return min(Role(first), Role(second), key=RANKS.__getitem__)


def role_refusal(role: str, needed: str) -> str:
    """Why `role` is refused something `needed` may do."""
    return f"{MAY_ONLY[Role(role)]}; this needs an {Role(needed)}."  # only editors and owners are ever needed


# A new token's role unless one is asked for: a swarm node's key writes, but runs nothing of the
# space's; an owner's is asked for by name.
TOKEN_DEFAULT_ROLE = Role.EDITOR
MANAGE_NEEDS = "managing the space needs an owner's session, or a token with the owner role and the manage scope"


def token_role_default(highest: str) -> Role:
    """The role of a token made without one: an editor's, unless `highest`, the most it may
    have (its member's and its maker's), is lower."""
    return role_lower(TOKEN_DEFAULT_ROLE, highest)


def manage_refusal(*, role: str, through_token: bool, manage: bool, write_under: str) -> str | None:
    """Why a principal acting with `role` may not manage the space (its members, its tokens, its
    settings, deleting it), or None if it may. A session: an owner's may. A token: only one
    with the owner role and the `manage` scope; one limited to a folder never, whatever it has."""
    if not through_token:
        return None if role_allows(role, Role.OWNER) else role_refusal(role, Role.OWNER)
    if write_under:
        return f"A token that writes only under {write_under} manages nothing; {MANAGE_NEEDS}."
    if not role_allows(role, Role.OWNER):
        return f"{MAY_ONLY[Role(role)]}; {MANAGE_NEEDS}."
    if not manage:
        return f"This token needs the manage scope for this: {MANAGE_NEEDS}."
    return None


def manage_scope_problem(*, manage: bool, role: str, write_under: str) -> str | None:
    """What is wrong with asking a new token for the `manage` scope, if anything: it manages
    only as an owner, and a token limited to a folder manages nothing."""
    if not manage:
        return None
    if write_under:
        return "A token limited to a folder (write_under) cannot have the manage scope: it manages nothing."
    if role != Role.OWNER:
        return f"A token with the manage scope is an owner's: ask for the role owner, not {Role(role)}."
    return None


def role_needed(method: str, declared: str | None) -> Role:
    """The role a request needs: what its view declares, else reader to read, editor to write."""
    if declared is not None:
        return Role(declared)
    return Role.READER if method in ("GET", "HEAD", "OPTIONS") else Role.EDITOR


def key_new() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def key_digest(key: str) -> str:
    """What is kept of a key: its SHA-256. A key is random enough that no salt or slow hash is needed."""
    return hashlib.sha256(key.encode()).hexdigest()


def write_under_problem(path: str) -> str | None:
    """What is wrong with a token's write_under, if anything: blank, or a path from the root
    that ends with '/'."""
    if path and not (path.startswith("/") and path.endswith("/")):
        return f"write_under must be a path from the root ending with '/', like /swarmstar/nodes/a/, not '{path}'."
    return None


def write_under_refusal(path: str, write_under: str, *, into: bool = False) -> str | None:
    """Why a token whose writes stay under `write_under` (blank: anywhere) may not write the
    node at `path`, a path from the root, or with `into`, put a node into the folder there;
    None if it may. The folder `write_under` names takes new nodes but is not itself under it."""
    # Names hold no '/': a node is under the folder exactly when its path starts with the folder's and '/'.
    written = path + "/" if into else path
    return None if written.startswith(write_under) else f"This token writes only under {write_under}."


@dataclass(frozen=True)
class Reach:
    """Until when a token acts (None: for good), and how many LLM calls and tokens a day the work
    it asks for may spend (None: its member's budget alone). Where it writes needs no such
    bound: a token limited to a folder makes no tokens (it manages nothing)."""

    expires_at: datetime | None
    llm_daily_calls: int | None = None
    llm_daily_tokens: int | None = None


def _first(asked: int | None, maker: int | None) -> int | None:
    return asked if asked is not None else maker


def reach_of_made_token(asked: Reach, maker: Reach) -> Reach:
    """A token made by a token reaches no further than its maker: the maker's expiry and budget
    unless the request names its own."""
    return Reach(
        asked.expires_at or maker.expires_at,
        _first(asked.llm_daily_calls, maker.llm_daily_calls),
        _first(asked.llm_daily_tokens, maker.llm_daily_tokens),
    )


def _above(value: int | None, bound: int | None) -> bool:
    return bound is not None and (value is None or value > bound)


def wider_than_maker_problem(reach: Reach, maker: Reach) -> str | None:
    """Why a token made (or changed) by a token would reach further than that token, if it would:
    expire later, or have a larger budget, or none where the maker has one."""
    if maker.expires_at is not None and (reach.expires_at is None or reach.expires_at > maker.expires_at):
        return f"A token that expires at {maker.expires_at.isoformat()} makes tokens that expire no later."
    for field, unit in (("llm_daily_calls", "LLM calls"), ("llm_daily_tokens", "tokens")):
        if _above(getattr(reach, field), bound := getattr(maker, field)):
            return f"A token with a daily budget of {bound:,} {unit} makes tokens with no larger one."
    return None


def token_refusal(*, revoked_at: datetime | None, expires_at: datetime | None, now: datetime) -> str | None:
    """Why a token may not be used any more, or None if it may."""
    if revoked_at is not None:
        return "The token has been revoked."
    if expires_at is not None and expires_at <= now:
        return "The token has expired."
    return None


def last_use_due(last_used_at: datetime | None, now: datetime) -> bool:
    return last_used_at is None or now - last_used_at >= LAST_USED_EVERY


def expiry_problem(*, expires_at: datetime | None, expires_in_days: int | None, now: datetime) -> str | None:
    """What is wrong with a new token's expiry, if anything: both forms given, or a moment past."""
    if expires_at is not None and expires_in_days is not None:
        return "Send expires_at or expires_in_days, not both."
    if expires_at is not None and expires_at <= now:
        return "expires_at must be in the future."
    return None


def expiry_of(*, expires_at: datetime | None, expires_in_days: int | None, now: datetime) -> datetime | None:
    """When a new token expires, from a moment or a number of days from now; None for never."""
    return now + timedelta(days=expires_in_days) if expires_in_days is not None else expires_at


def last_owner_problem(*, username: str, slug: str, role: str, new_role: str | None, owners: int) -> str | None:
    """Why a member with `role` may not become `new_role` (None: be removed), if they may not:
    the space's last owner stays one, or nobody could manage it."""
    if role != Role.OWNER or new_role == Role.OWNER or owners > 1:
        return None
    change = "removed" if new_role is None else f"made {Role(new_role)}"
    return f"{username} is the last owner of '{slug}' and cannot be {change}; make another member an owner first."


# What an owner may set on a space, each a member's cap bounded by the site setting named.
MEMBER_LIMITS = {
    "quota_searches": "MEMSITE_QUOTA_SEARCHES",
    "quota_ticks": "MEMSITE_QUOTA_TICKS",
    "quota_ticking_agents": "MEMSITE_QUOTA_TICKING_AGENTS",
    "quota_graph_ops": "MEMSITE_QUOTA_GRAPH_OPS",
    "member_llm_daily_calls": "MEMSITE_LLM_DAILY_CALLS",
    "member_llm_daily_tokens": "MEMSITE_LLM_DAILY_TOKENS",
}
# A daily LLM budget's fields, a space's (the whole space's) and a token's: any size (each
# member's own still applies), null for none.
LLM_BUDGETS = ("llm_daily_calls", "llm_daily_tokens")


def limit_max(field: str) -> int:
    """The largest count the column `field` keeps: token counts are 64-bit, the others 32-bit."""
    return 2**63 - 1 if field.endswith("_tokens") else 2**31 - 1


def limit_problem(field: str, value: int | None, site_cap: int | None = None) -> str | None:
    """What is wrong with `value` for a space's or a token's limit `field`, if anything: a
    member's cap above the site's `site_cap`, or a count below zero or past what the column
    keeps. None (unset) is always allowed."""
    if value is None:
        return None
    if not 0 <= value <= limit_max(field):
        return f"{field} must be from 0 to {limit_max(field):,}, not {value:,}."
    if site_cap is not None and value > site_cap:
        return f"{field} may be at most the site's {site_cap:,} ({MEMBER_LIMITS[field]}), not {value:,}."
    return None


def effective_limit(value: int | None, site_value: int) -> int:
    """A member's cap in a space: the owner's, else the site's."""
    return site_value if value is None else value


def space_delete_unconfirmed(slug: str, confirm: str | None) -> str | None:
    """Why deleting the space `slug` is not confirmed by `confirm`, if it is not: the slug is
    typed again, so that no stray request deletes everything."""
    return None if confirm == slug else f"Type the space's slug, {slug}, to confirm deleting it."


def space_delete_problem(slug: str) -> str | None:
    if slug == DEFAULT_SPACE:
        return f"The space '{DEFAULT_SPACE}' holds what came before spaces and cannot be deleted."
    return None


def spaces_owned_problem(owned: int, cap: int) -> str | None:
    if owned < cap:
        return None
    return f"You made {owned} spaces that still exist, the most one user may (MEMSITE_SPACES_PER_USER)."
