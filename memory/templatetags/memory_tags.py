from django import template

register = template.Library()


@register.filter
def type_label(type_name: str) -> str:
    return type_name.replace("_", " ")


@register.filter
def lookup(mapping: dict | None, key: str) -> object:
    """`mapping[key]`, or None: a template's way to look a value up by a variable's value."""
    return mapping.get(key) if mapping else None
