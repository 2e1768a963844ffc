"""Site-wide credentials in the Django admin: the key stored encrypted, a base off the
operator's list refused under the form."""

from __future__ import annotations

import pytest

from providers.models import ProviderCredential
from providers.services import credential_key

pytestmark = pytest.mark.django_db

URL = "/admin/providers/providercredential/add/"


def test_an_admin_adds_a_site_wide_key(client, admin_user):
    client.force_login(admin_user)

    response = client.post(
        URL, {"provider": "groq", "name": "groq", "api_key": "gsk-site-key-123456", "api_base": ""}
    )

    assert response.status_code == 302, response.content[:500]
    credential = ProviderCredential.objects.get()
    assert credential.owner is None and credential.key_hint == "gsk…3456"
    assert credential_key(credential) == "gsk-site-key-123456"
    page = client.get(f"/admin/providers/providercredential/{credential.pk}/change/")
    assert b"gsk-site-key-123456" not in page.content


def test_a_base_off_the_list_is_refused_in_the_form(client, admin_user, settings):
    settings.STUDIO_MODEL_API_BASES = []
    client.force_login(admin_user)

    response = client.post(
        URL,
        {"provider": "openai_compatible", "name": "box", "api_base": "http://10.1.2.3:8000/v1"},
    )

    assert response.status_code == 200
    assert b"STUDIO_MODEL_API_BASES" in response.content
    assert not ProviderCredential.objects.exists()
