"""Names across scripts: "Париже" and "Paris", "Берлин" and "Berlin" are one name
written in Cyrillic and in Latin letters. A crude transliteration (one letter for one
letter, as passports do) and a comparison of the first letters, the part that survives
Russian case endings and the usual spellings, is enough to tell "the same city" from
"another city" once the meaning (vectors) already says the texts are alike."""

from __future__ import annotations

import re

__all__ = ["NAME_LETTERS", "latin", "names_agree", "other_script", "same_name"]

NAME_LETTERS = 4  # letters compared: "париж"/"paris" -> "pari"; case endings come later
_LATIN = dict(
    zip(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
        "a b v g d e e zh z i i k l m n o p r s t u f kh ts ch sh shch - y - e yu ya".split(),
        strict=True,
    )
)
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
# Latin letters (longest first) back to Cyrillic, and the letters names are written with
# either way: "Hamburg" is "Гамбург", "Helsinki" "Хельсинки", "Paris" "Париж".
_BACK = sorted(
    [(lat, cyr) for cyr, lat in _LATIN.items() if lat not in ("-", "e") or cyr == "е"]
    + [("h", "х"), ("c", "к"), ("w", "в"), ("x", "кс"), ("q", "к"), ("j", "дж"), ("y", "й")],
    key=lambda pair: -len(pair[0]),
)

_NAME = re.compile(r"(?<![\w])[A-ZА-ЯЁ][\w'-]+")


def latin(word: str) -> str:
    """`word` in Latin letters, lower case ("Париже" -> "parizhe")."""
    return "".join(_LATIN.get(c, c) for c in word.lower()).replace("-", "")


def other_script(word: str, letters: int = NAME_LETTERS) -> list[str]:
    """The first `letters` letters of `word` as written in the other script, in its usual
    spellings ("гамбурге" -> ["gamb", "hamb"]; "hamburg" -> ["хамб", "гамб"]); [] for a
    word of neither script or shorter than `letters` + 1."""
    word = word.lower()
    if len(word) <= letters:
        return []
    if _CYRILLIC.search(word):
        if not word.isalpha():
            return []
        full = latin(word)
        also = "h" + full[2:] if full.startswith("kh") else "h" + full[1:] if full[0] == "g" else ""
        return [s[:letters] for s in dict.fromkeys([full, also]) if len(s) >= letters]
    if not word.isascii() or not word.isalpha():
        return []
    head = _cyrillic(word)[:letters]
    also = "г" + head[1:] if head.startswith("х") else ""
    return [s for s in dict.fromkeys([head, also]) if s]


def _cyrillic(word: str) -> str:
    out, i = [], 0
    while i < len(word):
        for lat, cyr in _BACK:
            if word.startswith(lat, i):
                out.append(cyr)
                i += len(lat)
                break
        else:
            out.append(word[i])
            i += 1
    return "".join(out)


def same_name(a: str, b: str) -> bool:
    """Whether two names are the same in any script: their Latin forms begin alike
    (`NAME_LETTERS` letters, or the whole of a shorter one)."""
    x, y = latin(a), latin(b)
    size = min(NAME_LETTERS, len(x), len(y))
    return size >= 3 and x[:size] == y[:size]


def names_agree(a: str, b: str) -> bool:
    """Whether two texts written in different scripts name the same things: every
    capitalised word after the first of each has its match in the other. False when
    both are in the same script (their names compare letter for letter elsewhere)."""
    if bool(_CYRILLIC.search(a)) == bool(_CYRILLIC.search(b)):
        return False
    left, right = _names(a), _names(b)
    return all(any(same_name(x, y) for y in right) for x in left) and all(
        any(same_name(y, x) for x in left) for y in right
    )


def _names(text: str) -> list[str]:
    """Capitalised words but a sentence's first (a capital there says nothing)."""
    found = []
    for m in _NAME.finditer(text):
        before = text[: m.start()].rstrip()
        if before and before[-1] not in ".!?":
            found.append(m.group())
    return found
