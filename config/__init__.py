"""Lethe's settings: one `Settings` in groups by concern, read once from `LETHE_*` environment variables."""

from config.settings import Settings, get_settings

__all__ = ["Settings", "get_settings"]
