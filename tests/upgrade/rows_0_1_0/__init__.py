"""What a studio holds after some use of release 0.1.0, written through its schema.

The field names here are 0.1.0's and stay so: these rows stand for an operator's data at
that release. No value looks like a secret (a later release's migrations may redact
those from stored errors, events and spans): what must survive is what was written.
"""

from __future__ import annotations

from tests.upgrade.ledger import Ledger
from tests.upgrade.rows_0_1_0.chat import write_chat
from tests.upgrade.rows_0_1_0.data import write_evals, write_knowledge, write_providers_and_traces
from tests.upgrade.rows_0_1_0.studio import write_editor, write_studio


def write_rows(ledger: Ledger) -> None:
    cast = write_studio(ledger)
    ada = cast["ada"]
    chats = write_chat(ledger, ada=ada, trip=cast["trip"], lookup=cast["lookup"])
    write_editor(ledger, weather=cast["weather"], grace=cast["grace"], admin=cast["admin"])
    write_knowledge(ledger, ada=ada)
    write_evals(ledger, ada=ada, trip=cast["trip"], thread=chats["thread"])
    write_providers_and_traces(ledger, ada=ada, **chats)
