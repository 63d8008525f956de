"""The LLM gateway: `memsite.llm.gateway.complete` is the one way to call a model; errors are in
`errors`, purposes in `purposes`. Nothing is re-exported here: memory.types imports
`memsite.llm.tokens` while models load, before the gateway's models can be imported."""
