from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start script from a URL of its own, not inline
    # (the Content-Security-Policy allows no inline script).
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="frontend/api_docs.html"
        ),
        name="api-docs",
    ),
    path("api/", include("agents_core.urls")),
    path("api/", include("tools_app.urls")),
    path("api/", include("knowledge.urls")),
    path("api/", include("providers.urls")),
    path("api/", include("traces.urls")),
    path("api/", include("evals.urls")),
    path("oauth/", include("tools_app.auth.urls")),
    path("knowledge/", include("knowledge.page_urls")),
    path("tests/", include("evals.page_urls")),
    path("providers/", include("providers.page_urls")),
    path("traces/", include("traces.page_urls")),
    path("", include("frontend.urls")),
]
