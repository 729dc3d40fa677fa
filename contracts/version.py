"""Lethe's version, as installed: what `lethe --version` prints and `GET /v1/health` answers."""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["VERSION"]

try:
    VERSION = version("lethe")
except PackageNotFoundError:  # run from a checkout that was never installed
    VERSION = "0+unknown"
