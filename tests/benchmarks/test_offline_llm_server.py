"""The load benchmarks' LLM server reads prompts from their prose, as a model would, since a
server is sent messages only."""

from benchmarks.kit.offlinellm import prose_reading
from memory.search import prompts


def test_the_server_reads_the_options_and_the_query_a_route_prompt_shows():
    options = [prompts.Option("memory_a", "recipes: bread"), prompts.Option("memory_b", "ops: postgres backups")]
    prompt = prompts.route_prompt(
        questions=["How are postgres backups run?"], context="", notes=[], where="/", options=options
    )

    read = prose_reading(prompt.messages)

    assert read.query == prompt.reading.query == "How are postgres backups run?"
    assert [(option.number, option.text) for option in read.options] == [
        (1, "recipes: bread"),
        (2, "ops: postgres backups"),
    ]
    assert read.options == prompt.reading.options
