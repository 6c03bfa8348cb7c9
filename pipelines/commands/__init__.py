"""Subcommands of `dkg`."""
