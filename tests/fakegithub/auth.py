"""App credentials for tests: RSA key pairs, GitHub App JWT checks, installation tokens."""

from __future__ import annotations

import secrets
import string
import time
from dataclasses import dataclass, field

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

# GitHub refuses App JWTs whose exp is more than 10 minutes after iat ("Authenticating as a GitHub App").
MAX_JWT_LIFETIME = 600
# Clock drift GitHub tolerates (it recommends back-dating iat by 60 s).
CLOCK_SKEW = 60
# Installation tokens live one hour on GitHub.
DEFAULT_TOKEN_LIFETIME = 3600


EXP_MESSAGE = (
    "'Expiration time' claim ('exp') must be a numeric value representing the future time at which "
    "the assertion expires."
)


@dataclass(frozen=True)
class KeyPair:
    private_pem: str
    public_pem: str

    def __repr__(self) -> str:  # keep the private key out of test reports
        return "KeyPair(<private>, <public>)"


def generate_key_pair(bits: int = 2048) -> KeyPair:
    """A fresh RSA key pair in PEM (PKCS#1 private key, as GitHub hands them out). Costs ~0.1 s: share it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return KeyPair(private, public)


def make_app_jwt(private_pem: str, app_id: int | str, *, iat: int | None = None, lifetime: int = 540) -> str:
    """A JWT as an App makes it (for tests of the fake; the App makes its own)."""
    issued = int(time.time()) - CLOCK_SKEW if iat is None else iat
    return jwt.encode({"iat": issued, "exp": issued + lifetime, "iss": str(app_id)}, private_pem, algorithm="RS256")


def check_app_jwt(token: str, public_pem: str, app_id: int, now: float | None = None) -> str | None:
    """None when GitHub would accept the JWT, else GitHub's complaint."""
    now = time.time() if now is None else now
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return "A JSON web token could not be decoded"
    if header.get("alg") != "RS256":
        return "A JSON web token could not be decoded"
    try:
        claims = jwt.decode(
            token,
            public_pem,
            algorithms=["RS256"],
            options={"verify_exp": False, "verify_iat": False, "verify_nbf": False, "verify_iss": False},
        )
    except jwt.InvalidSignatureError:
        return "A JSON web token could not be decoded"  # GitHub says this for a wrong key, too
    except jwt.PyJWTError:
        return "A JSON web token could not be decoded"
    iat, exp, iss = claims.get("iat"), claims.get("exp"), claims.get("iss")
    if not isinstance(iat, int):
        return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued."
    if not isinstance(exp, int):
        return EXP_MESSAGE
    if str(iss) != str(app_id):
        return f"'Issuer' claim ('iss') must be the App's id ({app_id}), got {iss!r}."
    if iat > now + CLOCK_SKEW:
        return "'Issued at' claim ('iat') must be an Integer representing a time in the past."
    if exp <= now:
        return EXP_MESSAGE
    if exp - iat > MAX_JWT_LIFETIME or exp > now + MAX_JWT_LIFETIME + CLOCK_SKEW:
        return "'Expiration time' claim ('exp') is too far in the future."
    return None


@dataclass
class Token:
    value: str
    installation_id: int
    expires_at: float
    repositories: frozenset[str] | None  # full names; None = every repository of the installation
    permissions: dict[str, str]
    revoked: bool = False
    uses: int = field(default=0)

    def __repr__(self) -> str:
        return f"Token(installation={self.installation_id}, expires_at={self.expires_at}, revoked={self.revoked})"


def new_token_value() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghs_" + "".join(secrets.choice(alphabet) for _ in range(36))


LEVELS = {"read": 1, "write": 2, "admin": 3}


def allows(granted: dict[str, str], permission: str, level: str) -> bool:
    return LEVELS.get(granted.get(permission, ""), 0) >= LEVELS[level]
