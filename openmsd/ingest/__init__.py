"""Readers: one per source format (and manuscripts), each yielding records with a report of what
it skipped and why; format detection."""
