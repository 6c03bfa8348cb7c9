"""bronze package."""
