"""Errors that the commands turn into one clear line and a non-zero exit."""

from osc_lib import exceptions


class CascadeError(exceptions.CommandError):
    """The cascade refused or failed; the message says why and what is
    left."""
