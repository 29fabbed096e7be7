"""Wolli: a terminal coding agent with a Python extension API."""

from .__about__ import __version__

__all__ = ["__version__"]
