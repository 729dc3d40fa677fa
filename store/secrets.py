"""Secrets kept at rest (a tenant's upstream key): Fernet, keyed from `LETHE_SECRET_KEY`.

The setting may list several secrets separated by commas: the first encrypts, every one decrypts, so a
secret is rotated by putting the new one first and re-saving the upstreams.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from contracts.errors import InvalidInput, LetheError

__all__ = ["SecretBox"]


def _fernet(secret: str) -> Fernet:
    # Any passphrase works: its SHA-256 is the 32-byte Fernet key.
    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(secret.encode()).digest()))


class SecretBox:
    def __init__(self, secrets: str) -> None:
        names = [s.strip() for s in secrets.split(",") if s.strip()]
        self._box = MultiFernet([_fernet(s) for s in names]) if names else None

    @property
    def enabled(self) -> bool:
        return self._box is not None

    def seal(self, plain: str) -> bytes:
        if self._box is None:
            raise InvalidInput("storing an upstream key needs LETHE_SECRET_KEY set on the gateway", field="api_key")
        return self._box.encrypt(plain.encode())

    def open(self, sealed: bytes) -> str:
        if self._box is None:
            raise LetheError("an upstream key is stored but LETHE_SECRET_KEY is not set")
        try:
            return self._box.decrypt(sealed).decode()
        except InvalidToken as exc:
            raise LetheError("a stored upstream key does not open with LETHE_SECRET_KEY (was it changed?)") from exc
