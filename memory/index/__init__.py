"""The content index: every node's text cut into passages, ranked by full text and by sentence
embeddings, the two fused (docs/retrieval.md)."""
