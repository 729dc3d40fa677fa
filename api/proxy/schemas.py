"""API shapes of a tenant's upstream setting (the key goes in, only its hint comes out)."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

__all__ = ["UpstreamPublic", "UpstreamSet"]


class UpstreamSet(BaseModel):
    base_url: str = Field(min_length=8, max_length=2000)
    api_key: str | None = Field(default=None, min_length=1, max_length=4000)

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL, e.g. https://api.openai.com/v1")
        return value.rstrip("/")


class UpstreamPublic(BaseModel):
    tenant_id: str
    base_url: str
    api_key_hint: str | None
