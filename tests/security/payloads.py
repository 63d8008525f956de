"""Script payloads for stored-XSS tests: every text of a world (tests/security/world.py) carries
one. Escaped, they are harmless text; as markup, any of them sets `window.__xss`."""

import re

from tests.security.world import Words

# Breaks out of an attribute, then runs a script two ways.
SCRIPT = '"\'><script>window.__xss=1</script><img src=x onerror="window.__xss=1">'
# For names and paths, which refuse '/': no closing tag, the same two ways to run.
NAME = '"\'><img src=x onerror="window.__xss=1"><svg onload="window.__xss=1">'
# For fields of at most 64 characters (a turn's role).
SHORT = '"><svg onload=window.__xss=1>'
PAYLOADS = Words(
    text=lambda label: f"{SCRIPT} {label}", name=lambda label: f"{NAME} {label}", short=lambda label: f"{SHORT}{label}"
)
# Any of these in a page means a payload reached it as markup.
RAW = re.compile(r"<script>window\.__xss|<img src=x onerror|<svg onload|href=\"javascript:", re.IGNORECASE)
