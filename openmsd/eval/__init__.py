"""Evaluation: metrics, SDSM tasks, retrieval and citation-recommendation evaluation."""
