"""datasets package."""
