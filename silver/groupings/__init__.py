"""groupings package."""
