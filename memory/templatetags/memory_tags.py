from django import template

register = template.Library()


@register.filter
def type_label(type_name: str) -> str:
    return type_name.replace("_", " ")
