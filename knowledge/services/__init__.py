"""Writes of knowledge: bases, documents, ingestion, search."""
