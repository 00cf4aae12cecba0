"""Texts written so the rules would not read them, read plainly: homoglyphs (Cyrillic or
Greek letters inside Latin words, or the other way round), leetspeak ("1gn0r3 4ll
pr10r"), spaced letters ("d i s r e g a r d   y o u r"), and text reversed or in rot13
when the text says to decode it so. Each is an alternative whole text; a rule that
matches one of them and not the text itself found something hidden. And the narration
test: quoted spans of a text that talks about attacks.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

__all__ = ["narrated_spans", "unmasked"]

# Letters that look alike across scripts: Cyrillic and Greek -> Latin, Latin -> Cyrillic.
_TO_LATIN = str.maketrans(
    "аеорсухіјѕԁһӏАВЕКМНОРСТХІЈЅοαειρτυκνΟΑΕΙΚΜΝΡΤΧΥΒΗΖ",
    "aeopcyxijsdhlABEKMHOPCTXIJSoaeiptukvOAEIKMNPTXYBHZ",
)
_TO_CYRILLIC = str.maketrans("aeopcyxkABEKMHOPCTX", "аеорсухкАВЕКМНОРСТХ")
_LOOKALIKE_CYRILLIC = frozenset("аеорсухіјѕԁһӏАВЕКМНОРСТХІЈЅ")
_MIXED = re.compile(r"[A-Za-z][\u0370-\u04ff]|[\u0370-\u04ff][A-Za-z]")
_WORD = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_OTHER = re.compile(r"[\u0370-\u04ff]")

_LEET_WORD = re.compile(
    r"(?<![\w@$])(?=[\w@$]*[A-Za-z])(?=[\w@$]*[0134579@$])[A-Za-z0-9@$]*[A-Za-z][A-Za-z0-9@$]*"
    r"(?![\w@$])|(?<![\w@$])[0134579]+[A-Za-z][A-Za-z0-9]*(?!\w)"
)
_LEET_HINT = re.compile(r"[A-Za-z][0134579@$]|[0134579][A-Za-z]")  # cheap, before the words
_LEET = str.maketrans("01345789@$", "oieastbgas")
_LEET_MIN = 3  # words mixing letters and digits: "2pm" and "mp3" are ordinary

_SPACED = re.compile(r"(?:(?<!\S)\S [ ]?){8,}")

# Stems an attack spelled out letter by letter contains, found in the letters run together.
_SPACED_WORDS = re.compile(
    r"ignor|disregard|forget|instruction|password|prompt|olvid|instrucci|contraseñ|oubli|consigne"
    r"|забудь|игнорир|инструкц|парол|правил",
    re.IGNORECASE,
)
_SPACED_ALARM = "ignore all previous instructions"  # read as what such spelling hides

_BACKWARDS = (
    "backwards", "backward", "reverse", "reversed", "l'envers", "à rebours", "al revés",
    "al reves", "задом", "наоборот", "справа налево",
)  # fmt: skip
_ROT13 = ("rot13", "rot-13", "rot 13")


def unmasked(text: str) -> Iterator[str]:
    """The plain readings of `text` (none for an ordinary text)."""
    if not text.isascii() and _MIXED.search(text):
        yield _WORD.sub(_fold_word, text)
    if len(_LEET_HINT.findall(text, 0, 4000)) >= _LEET_MIN and (
        len(_LEET_WORD.findall(text, 0, 4000)) >= _LEET_MIN
    ):
        yield _LEET_WORD.sub(lambda m: m[0].translate(_LEET), text)
    if _SPACED.search(text):
        joined = re.sub(r"(?<=\S) (?=\S)", "", text)
        if re.search(r"\S[ \t]{2,}\S", text) is None and _SPACED_WORDS.search(joined):
            yield _SPACED_ALARM  # spaced with single spaces only: the words run together
        yield re.sub(r"[ \t]{2,}", " ", joined)
    lowered = text.casefold()
    if any(word in lowered for word in _BACKWARDS):
        yield text[::-1]
    if any(word in lowered for word in _ROT13):
        yield codecs.decode(text, "rot13")


def _fold_word(match: re.Match[str]) -> str:
    """A word mixing scripts, in one: Cyrillic if it has a Cyrillic letter with no Latin
    look-alike ("Игнopиpyй"), else Latin ("іgnоrе", "Рlеаsе")."""
    word = match[0]
    if not (_LATIN.search(word) and _OTHER.search(word)):
        return word
    if any("\u0400" <= char <= "\u04ff" and char not in _LOOKALIKE_CYRILLIC for char in word):
        return word.translate(_TO_CYRILLIC)
    return word.translate(_TO_LATIN)


# Talk about attacks: security training, research, a pentest report, a question about one.
_META = re.compile(
    r"prompt[- ]?injection|injection (?:de|of) prompt|inyecci[oó]n de prompt|промпт[- ]?инъекц"
    r"|инъекци\w* промпт|jailbreak|джейлбрейк|red[- ]team|phishing|hame[cç]onnage|фишинг"
    r"|pentest|пентест"
    r"|\bexample|\bexemple|\bejemplo|\bпример|\barticle|\bart[ií]culo|стать[яеи]|researchers"
    r"|chercheurs|investigadores|исследовател|tricked|\bdefen[cs]e|se prot[eé]ger|protegerse|защит"
    r"|awareness|sensibilisation|concienciaci[oó]n"
    r"|\bslides|\bdiapos|client report|rapport|\baudit\b|\bleaked|a révélé|filtr[oó]|слил",
    re.IGNORECASE,
)
# Asking about one: a question, or a request to explain it.
_ASKS = re.compile(
    r"\?|\b(?:explain|explique[rz]?|expl[ií]ca(?:me)?|объясни(?:те)?|расскажи)\b", re.IGNORECASE
)
_QUOTED = re.compile(
    r"«[^»\n]{3,400}»|“[^”\n]{3,400}”|\"[^\"\n]{3,400}\"|(?<!\w)'[^'\n]{6,400}'(?!\w)"
    r"|<!--.{0,400}?-->|`[^`\n]{3,400}`|„[^“\n]{3,400}“",
    re.DOTALL,
)


def narrated_spans(text: str) -> list[tuple[int, int]]:
    """The quoted spans of a person's question about attacks ("can you explain why
    'Ignore previous instructions…' works?"): what they quote is narration, not a
    request. Empty unless the text talks about attacks and asks something."""
    if _META.search(text) is None or _ASKS.search(text) is None:
        return []
    return [match.span() for match in _QUOTED.finditer(text)]
