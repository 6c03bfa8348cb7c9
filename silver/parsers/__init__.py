"""parsers package."""
