"""RFC 7523 JWT bearer grant (service accounts): the studio signs an assertion with the
tool's private key; the local server verifies its signature with the public key."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tools_app.services.execute import tool_execute


def _rsa() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    return _rsa()


@pytest.fixture
def jwt_tool(oauth_server, auth_tool):
    def make(private_key: str, **auth):
        return auth_tool(
            f"{oauth_server.url}/api/files",
            {
                "type": "jwt_bearer",
                "token_url": f"{oauth_server.url}/token",
                "issuer": "robot@project.iam.example",
                "claims": {"scope": "files.read"},
                **auth,
            },
            {"private_key": private_key},
        )

    return make


def test_a_signed_assertion_gets_a_token_and_the_call_uses_it(jwt_tool, oauth_server, keys, owner):
    oauth_server.jwt_issuers["robot@project.iam.example"] = keys[1]
    tool = jwt_tool(keys[0])

    first = tool_execute(tool=tool, input={}, user=owner)
    second = tool_execute(tool=tool, input={}, user=owner)

    assert first.status == "completed", first.error
    assert first.output["body"] == {
        "sub": "robot@project.iam.example",
        "scope": "files.read",
        "path": "/api/files",
    }
    assert second.status == "completed", second.error
    assert len(oauth_server.token_requests) == 1  # cached
    request = oauth_server.token_requests[0]
    assert request["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"


def test_the_subject_is_the_account_acted_for(jwt_tool, oauth_server, keys, owner):
    oauth_server.jwt_issuers["robot@project.iam.example"] = keys[1]

    run = tool_execute(tool=jwt_tool(keys[0], subject="alice@example.test"), input={}, user=owner)

    assert run.status == "completed", run.error
    assert run.output["body"]["sub"] == "alice@example.test"


def test_an_assertion_signed_with_another_key_is_refused(jwt_tool, oauth_server, keys, owner):
    oauth_server.jwt_issuers["robot@project.iam.example"] = keys[1]
    other_private, _ = _rsa()

    run = tool_execute(tool=jwt_tool(other_private), input={}, user=owner)

    assert run.status == "failed"
    assert "JWT bearer grant refused" in run.error
    assert "invalid_grant" in run.error
    assert not oauth_server.api_requests
