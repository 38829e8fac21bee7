"""Ed25519 keys and signatures over a package's canonical manifest (``cryptography``).

A publisher's key pair: the private key as unencrypted PKCS#8 PEM (kept by the
publisher), the public key as base64 of its 32 raw bytes (given to operators).
A key's id is the first 16 hex digits of the sha256 of those raw bytes.
``signature.json`` is ``{"algorithm": "ed25519", "key_id", "signature"}`` with
the signature in base64.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from tenant_runtime.errors import BadRequest, PackageRejected
from tenant_runtime.packages.manifest import canonical

ALGORITHM = "ed25519"


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()[:16]


def generate_key() -> tuple[bytes, str]:
    """A new key pair: (private key PEM, public key base64)."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, public_key_of(pem)


def public_key_of(private_pem: bytes) -> str:
    """The base64 public key of a private key PEM."""
    raw = _private(private_pem).public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def decode_public_key(text: str) -> bytes:
    """The 32 raw bytes of a base64 Ed25519 public key; anything else is ``invalid_public_key``."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
        Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError, AttributeError):
        raise BadRequest("A public key is the base64 of 32 raw Ed25519 bytes.", code="invalid_public_key") from None
    return raw


def _private(pem: bytes) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise BadRequest("The private key is not an Ed25519 key.", code="invalid_private_key")
    return key


def sign_manifest(private_pem: bytes, manifest: dict[str, Any]) -> dict[str, str]:
    """The ``signature.json`` object of ``manifest`` signed with ``private_pem``."""
    private = _private(private_pem)
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    signature = private.sign(canonical(manifest))
    return {"algorithm": ALGORITHM, "key_id": key_id(raw), "signature": base64.b64encode(signature).decode()}


def signature_parts(document: dict[str, Any]) -> tuple[str, bytes]:
    """(key id, signature bytes) of a ``signature.json`` object; a malformed one is ``package_signature_invalid``."""
    algorithm, kid, signature = document.get("algorithm"), document.get("key_id"), document.get("signature")
    try:
        if algorithm != ALGORITHM or not isinstance(kid, str) or not isinstance(signature, str):
            raise ValueError
        raw = base64.b64decode(signature, validate=True)
        if len(raw) != 64:
            raise ValueError
    except (binascii.Error, ValueError):
        raise PackageRejected(
            'signature.json is {"algorithm": "ed25519", "key_id", "signature": <base64>}.',
            code="package_signature_invalid",
        ) from None
    return kid, raw


def check_signature(public_key: bytes, signature: bytes, manifest: dict[str, Any]) -> None:
    """Raise ``package_signature_invalid`` unless ``signature`` is ``public_key``'s over the canonical manifest."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, canonical(manifest))
    except InvalidSignature:
        raise PackageRejected(
            "The package's signature does not match its manifest.",
            details={"key_id": key_id(public_key)},
            code="package_signature_invalid",
        ) from None


__all__ = [
    "ALGORITHM",
    "check_signature",
    "decode_public_key",
    "generate_key",
    "key_id",
    "public_key_of",
    "sign_manifest",
    "signature_parts",
]
