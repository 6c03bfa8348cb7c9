"""gold package."""
