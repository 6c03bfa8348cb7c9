"""silver package."""
