"""Certificates the tests make with `cryptography`: a CA, a server certificate for
127.0.0.1 and a client certificate, all signed by that CA (and a second, unrelated CA)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def cert_pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _builder(subject: str, issuer: x509.Name, public_key) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
    )


@dataclass
class Pair:
    cert: str
    key: str


@dataclass
class Pki:
    ca: Pair
    server: Pair
    client: Pair
    other_ca: Pair


def _ca(name: str) -> tuple[Pair, ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    cert = (
        _builder(name, _name(name), key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Pair(cert_pem(cert), key_pem(key)), key, cert


def _leaf(name: str, ca_key, ca_cert: x509.Certificate, usage, ip: str | None = None) -> Pair:
    key = _key()
    builder = (
        _builder(name, ca_cert.subject, key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    if ip:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]),
            critical=False,
        )
    return Pair(cert_pem(builder.sign(ca_key, hashes.SHA256())), key_pem(key))


def make_pki() -> Pki:
    ca, ca_key, ca_cert = _ca("Studio Test CA")
    other, _, _ = _ca("Unrelated CA")
    return Pki(
        ca=ca,
        server=_leaf("127.0.0.1", ca_key, ca_cert, ExtendedKeyUsageOID.SERVER_AUTH, "127.0.0.1"),
        client=_leaf("studio client", ca_key, ca_cert, ExtendedKeyUsageOID.CLIENT_AUTH),
        other_ca=other,
    )


def server_tls(pki: Any, verify_mode: ssl.VerifyMode) -> ssl.SSLContext:
    """A TLS server context with the PKI's server certificate; `verify_mode` says whether a
    client certificate of the PKI's CA is required (CERT_REQUIRED), checked if sent
    (CERT_OPTIONAL) or not asked for (CERT_NONE)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as folder:
        cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        with open(cert, "w") as handle:
            handle.write(pki.server.cert)
        with open(key, "w") as handle:
            handle.write(pki.server.key)
        context.load_cert_chain(cert, key)
    context.verify_mode = verify_mode
    if verify_mode != ssl.CERT_NONE:
        context.load_verify_locations(cadata=pki.ca.cert)
    return context
