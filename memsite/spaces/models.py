from django.conf import settings
from django.db import models

from memsite.spaces.logic import Role

ROLE_CHOICES = [(role.value, role.value) for role in Role]


class ActedAs(models.TextChoices):
    """Whose work a row is: a user's (through a session or a token), or memsite's own upkeep in
    the space (descriptions, summaries, embeddings), charged to its system budget. Kept on work
    that runs later, so that a user gone is not taken for memsite itself."""

    USER = "user", "user"
    SYSTEM = "system", "system"


class Space(models.Model):
    """One swarm's memory, its members and its tokens; `default` holds what came before spaces."""

    slug = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by an owner; null: the site's (memsite.settings.limits). A member's caps on work in
    # flight and daily LLM budget, at most the site's; the whole space's daily LLM budget.
    quota_searches = models.PositiveIntegerField(null=True, blank=True)
    quota_ticks = models.PositiveIntegerField(null=True, blank=True)
    quota_ticking_agents = models.PositiveIntegerField(null=True, blank=True)
    quota_graph_ops = models.PositiveIntegerField(null=True, blank=True)
    member_llm_daily_calls = models.PositiveIntegerField(null=True, blank=True)
    member_llm_daily_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    llm_daily_calls = models.PositiveIntegerField(null=True, blank=True)
    llm_daily_tokens = models.PositiveBigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=ROLE_CHOICES)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["space", "user"], name="spaces_membership_once")]

    def __str__(self) -> str:
        return f"{self.user} in {self.space} ({self.role})"


class ApiToken(models.Model):
    """A key that acts for a member of a space, with a role no higher than the member's. Only
    the key's SHA-256 is kept; the key is shown once, when the token is made."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="tokens")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=200)
    role = models.CharField(max_length=16, choices=ROLE_CHOICES)
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    # A tree path the token's writes stay under ("/swarmstar/nodes/a/"); blank for anywhere.
    # memory/permissions.py holds the memory services to it.
    write_under = models.CharField(max_length=1000, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    # The token's own daily LLM budget, within its member's and the space's (None: not bounded):
    # a swarm node's key cannot spend what its operator's other nodes need.
    llm_daily_calls = models.PositiveIntegerField(null=True, blank=True)
    llm_daily_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    # The `manage` scope: with the owner role, it manages the space (members, tokens, settings,
    # deleting it), which an owner's token cannot do without it; never with a write_under.
    manage = models.BooleanField(default=False)
    # The token that made it through the API (None: made by a session, the CLI or the admin).
    # Its spend counts against the budgets of its makers, so minting keys resets no budget.
    minted_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="minted", editable=False
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
