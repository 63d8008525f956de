from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models

from memsite.spaces.models import ActedAs


class LLMCall(models.Model):
    """One call through the gateway, written whether it succeeded or not."""

    class Status(models.TextChoices):
        OK = "ok", "ok"
        ERROR = "error", "error"

    ActedAs = ActedAs

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Purposes are validated by the gateway rather than by choices, so adding one needs no
    # migration.
    purpose = models.CharField(max_length=32)
    provider = models.CharField(max_length=32)
    model = models.CharField(max_length=128)
    status = models.CharField(max_length=8, choices=Status.choices)
    error_reason = models.CharField(max_length=32, blank=True)
    error = models.TextField(blank=True)

    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    # False when the server reported no usage and the gateway counted the tokens itself.
    tokens_reported = models.BooleanField(default=True)
    tokens_approximate = models.BooleanField(default=False)
    latency_ms = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    retries = models.PositiveSmallIntegerField(default=0)
    repairs = models.PositiveSmallIntegerField(default=0)
    # json_schema, json_object, prompt (schema in the prompt only) or text.
    response_mode = models.CharField(max_length=16, blank=True)
    schema_name = models.CharField(max_length=128, blank=True)

    # The conversation as last sent (with any repair turns) and the last reply received.
    messages = models.JSONField(default=list)
    reply = models.TextField(blank=True)

    # What the call served: a search, a tick, a graph... Nullable: not every call serves a row.
    served_type = models.ForeignKey(ContentType, null=True, blank=True, on_delete=models.SET_NULL)
    served_id = models.PositiveBigIntegerField(null=True, blank=True)
    served = GenericForeignKey("served_type", "served_id")
    # Who the call served: a user, or memsite itself (the space's system budget counts it).
    acted_as = models.CharField(max_length=8, choices=ActedAs.choices, default=ActedAs.USER)
    # Whose work the call served: their daily budget counts it (memsite.quotas), in every space.
    # Empty for memsite's own work, and once the user is deleted.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    # The space whose work it was: its members see it in the ledger, and its budget counts it.
    # Kept when the space goes, with no space, for the site's own accounts.
    space = models.ForeignKey(
        "spaces.Space", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )

    # The token that asked for the work, when one did: its own budget counts it too.
    token = models.ForeignKey(
        "spaces.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )

    class Meta:
        verbose_name = "LLM call"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["purpose", "created_at"], name="llm_call_purpose_idx"),
            models.Index(fields=["served_type", "served_id"], name="llm_call_served_idx"),
            # A user's spend today: one range of this index (memsite.quotas).
            models.Index(fields=["user", "created_at"], name="llm_call_user_day_idx"),
            # A space's ledger, newest first, and its spend today.
            models.Index(fields=["space", "created_at"], name="llm_call_space_day_idx"),
            models.Index(fields=["token", "created_at"], name="llm_call_token_day_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=["ok", "error"]), name="llm_call_status_valid"),
            models.CheckConstraint(
                condition=models.Q(served_type__isnull=True, served_id__isnull=True)
                | models.Q(served_type__isnull=False, served_id__isnull=False),
                name="llm_call_served_pair",
            ),
            models.CheckConstraint(condition=models.Q(acted_as__in=["user", "system"]), name="llm_call_acted_as_valid"),
            # memsite's own work is no user's and asked for through no token.
            models.CheckConstraint(
                condition=models.Q(acted_as="user") | models.Q(user__isnull=True, token__isnull=True),
                name="llm_call_system_has_no_user",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.purpose} via {self.provider}/{self.model} ({self.status})"

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens
