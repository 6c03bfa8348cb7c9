"""Spark: the session builder and the helpers every streaming stage uses."""
