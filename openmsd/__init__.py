"""openmsd: multilingual related-paper search and citation recommendation (OpenMSD)."""

__version__ = "0.1.0"
