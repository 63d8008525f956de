from memsite.llm.services.calls import llm_call_record

__all__ = ["llm_call_record"]
