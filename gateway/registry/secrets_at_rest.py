"""Database passwords at rest: how the registry file spells a password, encrypted or not.

In memory a ``DatabaseRecord`` always holds the clear password; only the file
format (``file_format``) passes through ``PasswordCipher``. In the file a
password is one of:

- ``fernet:<token>``: encrypted with the configured ``secret_key`` (cryptography's
  Fernet: AES-128-CBC with an HMAC-SHA256, so a wrong key is detected, never
  turned into a wrong password);
- ``clear:<password>``: a clear password that itself begins with ``fernet:`` or
  ``clear:``, written so because no key is configured (the prefix keeps it from
  being read as encrypted);
- anything else: a clear password, as version 1 files always held it.

Without a key, passwords are written in clear; with one, every password is
written encrypted, so a file holding clear passwords is encrypted by the next
write (or at once by ``dbgateway rotate-key``).
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken

ENCRYPTED_PREFIX = "fernet:"
CLEAR_PREFIX = "clear:"


class PasswordDecryptionError(Exception):
    """A stored password cannot be decrypted: no key is configured, or not the one that encrypted it."""


def generate_key() -> str:
    """A new random Fernet key, as text for the ``secret_key`` setting."""
    return Fernet.generate_key().decode("ascii")


def is_encrypted(stored: str) -> bool:
    """Whether a password as the file spells it is encrypted."""
    return stored.startswith(ENCRYPTED_PREFIX)


class PasswordCipher:
    """Turns clear passwords into their file spelling and back, with or without a key."""

    def __init__(self, secret_key: str | None = None) -> None:
        self._fernet = Fernet(secret_key.strip()) if secret_key is not None else None

    @property
    def encrypts(self) -> bool:
        """True when a key is configured, so passwords are written encrypted."""
        return self._fernet is not None

    def seal(self, password: str) -> str:
        """The password as the file holds it."""
        if self._fernet is not None:
            return ENCRYPTED_PREFIX + self._fernet.encrypt(password.encode("utf-8")).decode("ascii")
        if password.startswith((ENCRYPTED_PREFIX, CLEAR_PREFIX)):
            return CLEAR_PREFIX + password
        return password

    def open(self, stored: str, owner: str) -> str:
        """The clear password from the file's spelling; ``owner`` names the database in the error."""
        if stored.startswith(CLEAR_PREFIX):
            return stored[len(CLEAR_PREFIX) :]
        if not is_encrypted(stored):
            return stored
        if self._fernet is None:
            raise PasswordDecryptionError(
                f"the password of database {owner!r} is encrypted and no secret_key is configured;"
                " set secret_key (or DBGATEWAY_SECRET_KEY) to the key that encrypted it"
            )
        try:
            return self._fernet.decrypt(stored[len(ENCRYPTED_PREFIX) :].encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError):
            raise PasswordDecryptionError(
                f"the password of database {owner!r} does not decrypt with the configured secret_key;"
                " it was encrypted with another key"
            ) from None
