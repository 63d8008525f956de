from django import template
from django.utils.safestring import SafeString

from memory.rendering import markdown_to_html

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    """Markdown rendered and sanitized: `{{ text|markdown }}`."""
    return markdown_to_html(text or "")


@register.filter
def type_label(type_name: str) -> str:
    return type_name.replace("_", " ")
