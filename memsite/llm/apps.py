from django.apps import AppConfig


class LLMAppConfig(AppConfig):
    name = "memsite.llm"
    label = "llm"
    verbose_name = "LLM gateway"
