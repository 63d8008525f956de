from django.conf import settings
from django.db import models

from memsite.spaces.logic import Role

ROLE_CHOICES = [(role.value, role.value) for role in Role]


class Space(models.Model):
    """A space of memory and its members. One, `default`, made by the migrations, for now."""

    slug = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

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
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
