"""One language's compiled rules and the shared ones (`InjectionRules`), matched against
every view of a text, and the verdict they add up to.
"""

from __future__ import annotations

from collections.abc import Mapping

from memoracle.capture.injection.book import _Book
from memoracle.capture.injection.gateway import blank_gateway_wrappers
from memoracle.capture.injection.model import Span, Verdict, _Hit, _Rule
from memoracle.capture.injection.unmask import narrated_spans, unmasked
from memoracle.capture.injection.views import _unrendered, _view

_CLEAN = Verdict("clean")


_TOOL_ROLES = frozenset({"tool", "toolResult", "tool_result", "function"})


class InjectionRules:
    """The compiled rule files. Build with `load_injection_rules`; immutable."""

    def __init__(
        self, languages: Mapping[str, tuple[_Rule, ...]], shared: tuple[_Rule, ...]
    ) -> None:
        self.codes = tuple(languages)
        english = languages.get("en", ())
        everything = (*shared, *(rule for rules in languages.values() for rule in rules))
        self._all = _Book(rule for rule in everything if not rule.hidden_only)
        self._by_lang = {
            code: _Book(
                rule for rule in dict.fromkeys((*shared, *english, *rules)) if not rule.hidden_only
            )
            for code, rules in languages.items()
        }
        # Hidden text is judged by every rule of every language, "hidden" scope included.
        self._hidden = _Book(everything)

    def classify(self, text: str, *, lang: str | None = None, role: str | None = None) -> Verdict:
        """How `text` looks as a write (see the module docstring). Never raises."""
        if not text:
            return _CLEAN
        code = lang.lower().replace("_", "-").split("-")[0] if lang else ""
        view = _view(blank_gateway_wrappers(text))  # same length: spans stay offsets in text
        hits = list(view.hits)
        hidden: list[str] = []
        for payload, start, end, always in view.payloads:
            found = self._judge(payload, start, end)
            if found or always:
                hits += found or [_Hit("hidden-instructions", True, start, end)]
                hidden.append(payload)
        book = self._by_lang.get(code, self._all)
        for rule, start, end in book.scan(view.text):
            hits.append(_Hit(rule.reason, rule.dangerous, *view.original(start, end), rule.cue))
        for payload, start, end in _unrendered(view.text):
            found = self._judge(payload, *view.original(start, end)) or _hidden_prose(
                payload, view.text[start : start + 4], *view.original(start, end)
            )
            if found:
                hits += found
                hidden.append(payload)
        if role not in _TOOL_ROLES and hits:
            narrated = narrated_spans(text)
            hits = [hit for hit in hits if not _inside(hit, narrated)]
        seen = {hit.reason for hit in hits}
        for plain in unmasked(view.text):
            # Obfuscated text fools language detection too: every language reads it.
            read = [rule for rule, _, _ in self._all.scan(plain) if rule.reason not in seen]
            if any(not rule.cue for rule in read) or len({rule.reason for rule in read}) >= 2:
                hits += [_Hit("obfuscated", True, 0, len(text))]
                hits += [_Hit(rule.reason, True, 0, len(text)) for rule in read]
                hidden.append(plain)
                break
        # What a tool fetched (a turn of a tool's role, or quoted inside the gateway's
        # untrusted-content markers) has no business instructing the agent at all.
        fetched = role in _TOOL_ROLES or "EXTERNAL_UNTRUSTED_CONTENT" in text
        return _verdict(hits, hidden, alone=fetched)

    def _judge(self, payload: str, start: int, end: int) -> list[_Hit]:
        """Hits for hidden `payload`, all at ``[start, end)``: "hidden-instructions" and
        the reason of each rule it matches. What a visible-text rule flags is dangerous
        once hidden; "hidden"-scope rules carry their own level."""
        found = list(self._hidden.scan(_view(payload).text))
        if not found:
            return []
        dangerous = any(rule.dangerous or not rule.hidden_only for rule, _, _ in found)
        hits = [_Hit("hidden-instructions", dangerous, start, end)]
        hits += (_Hit(rule.reason, rule.dangerous, start, end) for rule, _, _ in found)
        return list(dict.fromkeys(hits))


_HIDDEN_ELEMENT_WORDS = 8  # a sentence in an element styled invisible is written for a machine
_HIDDEN_COMMENT_WORDS = 12  # a comment that long is a message, not a marker
_OWN_MARKERS = ("memoracle:", "openclaw")  # MEMORY.md's block markers, OpenClaw's own


def _hidden_prose(payload: str, opening: str, start: int, end: int) -> list[_Hit]:
    """A hit when hidden text is prose whatever it says: a sentence a person cannot see
    is there for the model that reads the page (an element styled invisible, held; a
    long HTML comment, a suspicious write). Base64 and Markdown comments are judged by
    the rules alone."""
    words = len(payload.split())
    if payload.lstrip().startswith(_OWN_MARKERS):
        return []
    if opening.startswith("<!--"):
        return (
            [_Hit("hidden-instructions", False, start, end)]
            if words >= _HIDDEN_COMMENT_WORDS
            else []
        )
    if opening.startswith("<") and words >= _HIDDEN_ELEMENT_WORDS:
        return [_Hit("hidden-instructions", True, start, end)]
    return []


def _inside(hit: _Hit, spans: list[tuple[int, int]]) -> bool:
    return any(start <= hit.start and hit.end <= end for start, end in spans)


def _verdict(hits: list[_Hit], hidden: list[str], *, alone: bool = False) -> Verdict:
    """What the hits add up to. A cue counts beside another signal, or `alone` (in a
    tool's output, where any instruction to the agent is one)."""
    strong = any(not hit.cue for hit in hits)
    if not strong and len({hit.reason for hit in hits}) < 2 and not alone:
        return _CLEAN
    if not hits:
        return _CLEAN
    hits.sort(key=lambda hit: (hit.start, hit.end))
    weak = {hit.reason for hit in hits if not hit.dangerous}
    dangerous = any(hit.dangerous for hit in hits) or len(weak) >= 2
    return Verdict(
        "dangerous" if dangerous else "suspicious",
        tuple(dict.fromkeys(hit.reason for hit in hits)),
        tuple(dict.fromkeys(Span(hit.reason, hit.start, hit.end) for hit in hits)),
        tuple(dict.fromkeys(hidden)),
    )
