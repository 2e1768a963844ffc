"""A small labelled retrieval set built for the knowledge base: documents of a fictional
company's help centre, and questions with the document that answers each.

Two kinds of questions, as real users ask them: some name an exact term (an error code,
a product code, a command) that full-text search finds and a small embedding model
blurs; others say the same thing in other words, which vectors find and full text does
not. Hybrid search should do well on both. Used by bench.knowledge and the tests.
"""

from __future__ import annotations

DOCUMENTS: dict[str, str] = {
    "refunds": "Refund policy. If you are not satisfied, we reimburse the full purchase "
    "amount within 30 days. The reimbursement goes back to the original card in five "
    "business days.",
    "shipping": "Delivery times. Parcels leave our warehouse within two days and arrive in "
    "three to seven days. Express delivery arrives the next day for orders placed before noon.",
    "password": "Account access. To choose a new password open Settings, then Security, "
    "then Change password. A link valid for one hour is sent to your e-mail address.",
    "error_e4711": "Error E-4711 means the sync token expired. Sign out of the desktop "
    "client and sign in again to issue a fresh token.",
    "error_e4712": "Error E-4712 means the sync session expired. Close the desktop client "
    "and open it again to start a new session.",
    "error_e4713": "Error E-4713 means the sync key was revoked. Sign in on the web and "
    "create a new key for the desktop client.",
    "error_e2093": "Error E-2093 appears when the disk quota is exceeded. Delete old "
    "backups or upgrade the storage plan.",
    "error_e2094": "Error E-2094 appears when the storage volume is full. Remove old "
    "snapshots or buy more space.",
    "zx900": "The ZX-900 router supports Wi-Fi 6 and four gigabit ports. Its list price is "
    "149 euros.",
    "zx700": "The ZX-700 router is the older model with Wi-Fi 5 and two ports, sold at 89 euros.",
    "zx950": "The ZX-950 router adds Wi-Fi 6E and six gigabit ports; its list price is 199 euros.",
    "zx800": "The ZX-800 router supports Wi-Fi 6 and four ports, priced at 129 euros.",
    "privacy": "Data protection. We keep personal information only as long as the law "
    "requires and never sell it to third parties. You can ask for a copy of your data.",
    "cancel": "Ending a subscription. You can stop your plan at any time from the Billing "
    "page; it stays active until the end of the paid period.",
    "invoice": "Invoices are issued on the first day of each month and can be downloaded "
    "as PDF from the Billing page.",
    "twofactor": "Two-step verification adds a one-time code from an authenticator app to "
    "your sign-in. Turn it on under Settings, Security.",
    "cli_sync": "The command `acme sync --prune` removes remote files that no longer exist "
    "locally. Run `acme sync --dry-run` first to see what would change.",
    "cli_push": "The command `acme push --force` overwrites remote files with local ones. "
    "Use `acme push --dry-run` to preview the upload.",
    "cli_pull": "The command `acme pull --prune` deletes local files that were removed "
    "remotely. Preview it with `acme pull --dry-run`.",
    "battery": "Battery care. Keep the charge between 20 and 80 percent and avoid heat to "
    "make the cells last longer.",
    "warranty": "Hardware guarantee. Devices are covered for two years against "
    "manufacturing defects; we repair or replace a faulty unit free of charge.",
    "office": "Our head office is in Lyon, 12 rue de la Republique, open Monday to Friday "
    "from nine to six.",
    "careers": "Jobs. We hire engineers and support staff; send a resume and a short "
    "letter through the careers portal.",
    "pets": "Travelling with animals. Dogs and cats under eight kilograms may ride in the "
    "cabin in a closed carrier.",
    "api_limits": "API rate limits. Each key may send 600 requests per minute; above that "
    "the API answers HTTP 429 with a Retry-After header.",
    "outage": "Status page. Planned maintenance is announced 48 hours ahead; incidents are "
    "posted live on status.acme.example.",
    "gift": "Gift cards never expire and can be spent on any product in the store, in one "
    "or several purchases.",
}

# (question, the id of the document that answers it, kind)
QUERIES: list[tuple[str, str, str]] = [
    ("E-4711", "error_e4711", "exact"),
    ("what does E-2093 mean", "error_e2093", "exact"),
    ("ZX-900 price", "zx900", "exact"),
    ("ZX-700", "zx700", "exact"),
    ("ZX-800 ports", "zx800", "exact"),
    ("E-4713", "error_e4713", "exact"),
    ("acme push --force", "cli_push", "exact"),
    ("acme sync --prune", "cli_sync", "exact"),
    ("HTTP 429 Retry-After", "api_limits", "exact"),
    ("status.acme.example", "outage", "exact"),
    ("Lyon rue de la Republique", "office", "exact"),
    ("how do I get my money back", "refunds", "paraphrase"),
    ("when will my package show up", "shipping", "paraphrase"),
    ("I forgot how to log in", "password", "paraphrase"),
    ("who can see my personal details", "privacy", "paraphrase"),
    ("how do I quit my membership", "cancel", "paraphrase"),
    ("where can I find my bills", "invoice", "paraphrase"),
    ("extra security code when signing in", "twofactor", "paraphrase"),
    ("make my laptop battery live longer", "battery", "paraphrase"),
    ("my device broke after a year, is the repair free", "warranty", "paraphrase"),
    ("are you recruiting", "careers", "paraphrase"),
    ("can I bring my puppy on board", "pets", "paraphrase"),
    ("present voucher expiry", "gift", "paraphrase"),
]


def recall_at(ranked: list[str], wanted: str, k: int) -> float:
    return 1.0 if wanted in ranked[:k] else 0.0


def reciprocal_rank(ranked: list[str], wanted: str) -> float:
    return 1.0 / (ranked.index(wanted) + 1) if wanted in ranked else 0.0


def scores(runs: list[tuple[list[str], str]], k: int = 5) -> dict[str, float]:
    """recall@k and MRR over (ranked document ids, wanted id) pairs."""
    n = len(runs) or 1
    return {
        f"recall@{k}": round(sum(recall_at(r, w, k) for r, w in runs) / n, 3),
        "mrr": round(sum(reciprocal_rank(r, w) for r, w in runs) / n, 3),
    }
