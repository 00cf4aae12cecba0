"""LoCoMo conversations (``locomo10.json``: a list of samples, or one sample).

Owns turning each sample's ``conversation.session_<N>`` lists, in numeric order, into
turns: ``role="speaker"``, ``speaker`` the name, ``turn_id`` the ``dia_id``,
``session_id`` ``"<sample_id>:session_<N>"``, ``at`` the session's
``session_<N>_date_time`` read as ``"%I:%M %p on %d %B, %Y"``, a wall-clock time with
no zone (the capture layer reads it in ``workspace.timezone``). A shared photo's
``blip_caption`` is appended as ``[shares photo: ...]``.

Only the turns are read. ``qa``, ``observation``, ``session_summary``,
``event_summary`` and a photo's ``query`` hold the benchmark's answers or its search
metadata and are never looked at. Date keys without a session list (conv-26 has some)
are ignored because iteration is over the lists.

The file is one JSON document and is loaded whole (LoCoMo-10 is ~3 MB; the parsed
structure is a few times that), then the parts we do not read are dropped at once.
Origins are ``path#sample_id:dia_id``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memoracle.errors import InvalidInput
from memoracle.ingest.callbacks import OnProgress, OnWarning, mb, too_big
from memoracle.text import MONTHS
from memoracle.types import PHOTO_CAPTION, IngestWarning, Turn

DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE = re.compile(
    r"^\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>[AaPp][Mm])\s+on\s+"
    r"(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]+),?\s+(?P<year>\d{4})\s*$"
)
_MONTHS = {name: i for i, name in enumerate(MONTHS, start=1)}


def read_locomo(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[Turn]:
    """Every turn of every sample, sample by sample, session by session."""
    name = str(path)
    size = path.stat().st_size
    samples = _load_samples(path)
    on_progress(size // 10, size)
    conversations: list[tuple[str, Mapping[str, Any]]] = []
    for i, sample in enumerate(samples):
        if not isinstance(sample, Mapping) or not isinstance(sample.get("conversation"), Mapping):
            on_warning(IngestWarning(f"{name}#{i}", "sample without a conversation; skipped"))
            continue
        sample_id = sample.get("sample_id")
        conversations.append(
            (str(sample_id) if sample_id else f"sample-{i}", sample["conversation"])
        )
    del samples  # qa, observations and summaries are never read; let them go now
    for n, (sample_id, conversation) in enumerate(conversations):
        yield from _sample_turns(name, sample_id, conversation, on_warning, max_text_bytes)
        on_progress(size // 10 + (size - size // 10) * (n + 1) // len(conversations), size)
    on_progress(size, size)


def _load_samples(path: Path) -> list[Any]:
    try:
        with path.open("rb") as f:
            document = json.load(f)
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"'{path}' is not UTF-8 (byte {exc.start}); LoCoMo is UTF-8 JSON."
        ) from exc
    except RecursionError:
        raise InvalidInput(
            f"'{path}' is not a valid LoCoMo JSON document: nested too deeply."
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"'{path}' is not a valid LoCoMo JSON document: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}."
        ) from exc
    if isinstance(document, Mapping) and "conversation" in document:
        return [document]
    if isinstance(document, list):
        return document
    raise InvalidInput(
        f"'{path}' is JSON but not LoCoMo: expected a list of samples with 'conversation'."
    )


def _sample_turns(
    name: str,
    sample_id: str,
    conversation: Mapping[str, Any],
    on_warning: OnWarning,
    max_text_bytes: int,
) -> Iterator[Turn]:
    numbers = sorted(
        int(m.group(1))
        for key, value in conversation.items()
        if (m := _SESSION_KEY.match(key)) and isinstance(value, list)
    )
    for n in numbers:
        at = _session_time(conversation.get(f"session_{n}_date_time"))
        if at is None:
            on_warning(
                IngestWarning(
                    f"{name}#{sample_id}:session_{n}",
                    f"no readable session_{n}_date_time; turns kept without a time",
                )
            )
        for position, raw in enumerate(conversation[f"session_{n}"], start=1):
            turn = _turn(raw, name, sample_id, n, position, at, on_warning)
            if turn is None:
                continue
            size = too_big(turn.text, max_text_bytes)
            if size is not None:
                on_warning(
                    IngestWarning(
                        turn.origin or name,
                        f"text of {mb(size)} is above the {mb(max_text_bytes)} limit; skipped",
                    )
                )
                continue
            yield turn


def _turn(
    raw: object,
    name: str,
    sample_id: str,
    session: int,
    position: int,
    at: datetime | None,
    on_warning: OnWarning,
) -> Turn | None:
    dia_id = raw.get("dia_id") if isinstance(raw, Mapping) else None
    turn_id = dia_id if isinstance(dia_id, str) and dia_id else f"D{session}:{position}"
    origin = f"{name}#{sample_id}:{turn_id}"
    if not isinstance(raw, Mapping):
        on_warning(IngestWarning(origin, "turn is not an object; skipped"))
        return None
    speaker = raw.get("speaker")
    text = raw.get("text")
    if not isinstance(speaker, str) or not speaker or not isinstance(text, str):
        on_warning(IngestWarning(origin, "turn without speaker or text; skipped"))
        return None
    caption = raw.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text = f"{text.strip()} {PHOTO_CAPTION}{caption.strip()}]".strip()
    if not text.strip():
        return None
    return Turn(
        role="speaker",
        text=text.strip(),
        at=at,
        session_id=f"{sample_id}:session_{session}",
        turn_id=turn_id,
        speaker=speaker,
        origin=origin,
    )


def _session_time(value: object) -> datetime | None:
    """`DATE_FORMAT` parsed by hand: strptime's %B and %p follow the process locale."""
    m = _DATE.match(value) if isinstance(value, str) else None
    if m is None:
        return None
    month = _MONTHS.get(m.group("month").lower())
    hour = int(m.group("hour"))
    if month is None or not 1 <= hour <= 12:
        return None
    hour = hour % 12 + (12 if m.group("ampm").lower() == "pm" else 0)
    try:
        return datetime(
            int(m.group("year")),
            month,
            int(m.group("day")),
            hour,
            int(m.group("minute")),
        )
    except ValueError:
        return None
