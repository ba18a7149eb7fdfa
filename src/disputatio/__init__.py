"""disputatio: structured debates between real coding-agent CLIs."""

__version__ = "0.1.0"
