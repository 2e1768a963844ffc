"""Connectors: ready-made tool sets for well-known APIs (Jira, Confluence, ServiceNow,
Salesforce, SharePoint through Microsoft Graph, Google Custom Search, Google Maps).

Each connector is data, not code: a curated OpenAPI document and a small manifest under
`specs/<slug>/` (catalogue.py reads them). Adding one makes OpenAPI tools through the
OpenAPI source importer (tools_app.sources.openapi), with the instance URL as the base
URL, the chosen authentication preset and the connector's fixed settings (services.py).
"""
