"""PEM material of a tool or source: read with `cryptography` (so a bad paste is a 400
naming the field, not a TLS failure later) and turned into the `ssl.SSLContext` httpx
connects with: the system's CAs, or the tool's own `ca_bundle` instead, and the client
certificate for mutual TLS."""

from __future__ import annotations

import os
import ssl
import tempfile
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

_CERT_FIELDS = ("client_cert", "ca_bundle")


def _certificates(text: str) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(text.encode())


def _private_key(text: str) -> Any:
    return serialization.load_pem_private_key(text.encode(), password=None)


def pem_problem(field: str, text: Any) -> str | None:
    """Why `text` is not usable as `field`, or None."""
    if not isinstance(text, str) or "-----BEGIN" not in text:
        return f"{field} must be PEM text (-----BEGIN ...-----)."
    try:
        if field in _CERT_FIELDS:
            _certificates(text)
        else:
            _private_key(text)
    except (ValueError, TypeError) as exc:
        kind = "certificate" if field in _CERT_FIELDS else "unencrypted private key"
        return f"{field} is not a readable PEM {kind}: {exc}"
    return None


def pair_problem(cert: str, key: str) -> str | None:
    """Why the client certificate and key do not belong together, or None."""
    public = (
        _certificates(cert)[0]
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    own = (
        _private_key(key)
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return None if public == own else "client_key is not the key of client_cert."


def ssl_context(secrets: dict[str, Any]) -> ssl.SSLContext | None:
    """The context for a request with this TLS material, or None for the default one."""
    ca_bundle, cert, key = (secrets.get(k) for k in ("ca_bundle", "client_cert", "client_key"))
    if not (ca_bundle or cert):
        return None
    context = ssl.create_default_context(cadata=ca_bundle) if ca_bundle else None
    context = context or ssl.create_default_context()
    if cert and key:
        # The ssl module loads a certificate chain only from files: write both to a
        # private temporary directory for the one call, then remove them.
        with tempfile.TemporaryDirectory(prefix="studio-tls-") as folder:
            os.chmod(folder, 0o700)
            cert_path, key_path = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
            for path, text in ((cert_path, cert), (key_path, key)):
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(descriptor, "w") as handle:
                    handle.write(text)
            context.load_cert_chain(cert_path, key_path)
    return context
