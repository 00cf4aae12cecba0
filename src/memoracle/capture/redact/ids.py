"""Identity numbers (with their check digits where they have one: French NIR key,
Spanish DNI/NIE letter, Russian SNILS and INN checksums; US SSN by its ranges; passports
after their name: `loose`) and second factors (otpauth:// URIs, base32 TOTP seeds, backup codes
after their label, wallet seed phrases after theirs)."""

from __future__ import annotations

import re
from collections.abc import Iterator

Span = tuple[int, int, str]

_DIGITS6 = re.compile(r"\d(?:[ .-]?\d){5}")
_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])")
_SSN_WORDS = re.compile(r"(?i:ssn|social\s+security|soc\.?\s*sec|\bsocial\b)")
_NINE = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{9}(?![\d-])")
_NIR = re.compile(
    r"(?<![\d])[12][ .]?\d{2}[ .]?(?:0[1-9]|1[0-2]|[2-9]\d)[ .]?(?:\d{2}|2[AB])[ .]?\d{3}[ .]?\d{3}"
    r"(?:[ .]?(?P<key>\d{2}))?(?!\d)"
)
_NIR_WORDS = re.compile(r"(?i:s[ée]cu|nir|insee|s[ée]curit[ée]\s+sociale|carte\s+vitale)")
_DNI = re.compile(
    r"(?<![\w-])(?P<nie>[XYZxyz][- ]?)?(?P<num>\d{7,8})[- ]?(?P<letter>[A-Za-z])(?![\w-])"
)
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_SNILS = re.compile(r"(?<![\d-])\d{3}[- ]?\d{3}[- ]?\d{3}[- ]\d{2}(?![\d-])")
_INN = re.compile(r"(?<!\d)(?:\d{12}|\d{10})(?!\d)")
_INN_WORDS = re.compile(r"(?i:инн|\binn\b|taxpayer|налогов)")


def _nir_ok(m: re.Match[str], text: str) -> bool:
    raw = re.sub(r"[ .]", "", m.group(0))
    key = m["key"]
    body = raw[:13] if key else raw
    if not key:
        return _NIR_WORDS.search(text) is not None
    number = int(body.replace("2A", "19").replace("2B", "18"))
    return 97 - number % 97 == int(key)


def _dni_ok(m: re.Match[str]) -> bool:
    num = m["num"]
    if m["nie"]:
        if len(num) != 7:
            return False
        num = str("XYZ".index(m["nie"][0].upper())) + num
    elif len(num) != 8:
        return False
    return _DNI_LETTERS[int(num) % 23] == m["letter"].upper()


def _snils_ok(value: str) -> bool:
    digits = [int(c) for c in value if c.isdigit()]
    if len(digits) != 11:
        return False
    total = sum(d * (9 - i) for i, d in enumerate(digits[:9]))
    check = total if total < 100 else (0 if total in (100, 101) else total % 101 % 100)
    return check == digits[9] * 10 + digits[10]


def _inn_ok(value: str) -> bool:
    d = [int(c) for c in value]

    def check(weights: tuple[int, ...]) -> int:
        return sum(w * x for w, x in zip(weights, d, strict=False)) % 11 % 10

    if len(d) == 10:
        return check((2, 4, 10, 3, 5, 9, 4, 6, 8)) == d[9]
    w11 = (7, 2, 4, 10, 3, 5, 9, 4, 6, 8)
    w12 = (3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8)
    return check(w11) == d[10] and check(w12) == d[11]


def identity_numbers(text: str, low: str) -> Iterator[Span]:
    if _DIGITS6.search(text) is None:
        return
    for m in _SSN.finditer(text):
        if m.group(1) == "-" or _SSN_WORDS.search(text):
            yield m.start(), m.end(), "national_id"
    if _SSN_WORDS.search(text):
        for m in _NINE.finditer(text):
            yield m.start(), m.end(), "national_id"
    for m in _NIR.finditer(text):
        if _nir_ok(m, text):
            yield m.start(), m.end(), "national_id"
    for m in _DNI.finditer(text):
        if _dni_ok(m):
            yield m.start(), m.end(), "national_id"
    for m in _SNILS.finditer(text):
        if _snils_ok(m.group(0)):
            yield m.start(), m.end(), "national_id"
    if _INN_WORDS.search(text):
        for m in _INN.finditer(text):
            if _inn_ok(m.group(0)):
                yield m.start(), m.end(), "national_id"


_OTPAUTH = re.compile(r"otpauth(?:-migration)?://\S+", re.IGNORECASE)
_BASE32 = re.compile(
    r"(?<![A-Za-z0-9])[A-Z2-7]{4}(?:[ -]?[A-Z2-7]{4}){2,}(?:[ -]?[A-Z2-7]{1,4})?=*(?![A-Za-z0-9])"
)
_B32_HINT = re.compile(r"[A-Z2-7]{4}|[a-z2-7]{4} [a-z2-7]{4}")
_BASE32_LOW = re.compile(r"(?<![A-Za-z0-9])(?:[a-z2-7]{4} ){3,}[a-z2-7]{4}(?![A-Za-z0-9])")
_2FA_WORDS = re.compile(
    r"(?i:totp|2fa|two[- ]factor|otp|authenticator|seed|secret|mfa|clé|ключ|секрет|secreto"
    r"|clave|key|código|code|двухфактор|2фа)"
)
_BACKUP = re.compile(
    r"(?i:(?:backup|recovery|rescue|one[- ]time|2fa|mfa|emergency)\s+(?:\w+\s+)?codes?"
    r"|codes?\s+de\s+(?:secours|récupération|recuperation|sauvegarde|r[ée]cup)"
    r"|c[óo]digos?\s+de\s+(?:respaldo|recuperaci[óo]n|seguridad|copia|emergencia)"
    r"|резервн\w+\s+код\w*|код\w*\s+восстановлени\w*|одноразов\w+\s+код\w*)"
)
_CODE_ITEM = re.compile(
    r"(?<![\w-])(?:(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6}){2,}"
    r"|(?=[A-Za-z0-9 -]*\d)[A-Za-z0-9]{4,5}[- ][A-Za-z0-9]{4,5}|\d{6,10}"
    r"|(?=[a-z]*\d)[a-z0-9]{8,10})(?![\w-])"
)
_SEED_WORDS = re.compile(
    r"(?i:seed\s+(?:phrase|words)|recovery\s+(?:phrase|words|seed)|mnemonic(?:\s+phrase)?"
    r"|secret\s+recovery\s+phrase|wallet\s+(?:words|phrase|seed)|сид[- ]?фраз\w*|seed[- ]фраз\w*"
    r"|мнемони\w+\s+фраз\w*|фраз\w+\s+восстановлени\w*|секретн\w+\s+фраз\w*|phrase\s+(?:de\s+"
    r"(?:récupération|recuperation|r[ée]cup|secours)|mn[ée]monique|secrète)|mots\s+de\s+récupération"
    r"|frase\s+(?:semilla|de\s+(?:recuperaci[óo]n|respaldo|semilla)|secreta|mnem[óo]nica)"
    r"|palabras\s+(?:semilla|de\s+recuperaci[óo]n))"
)
_SEED_RUN = re.compile(
    r"(?:(?:\d{1,2}[.)]?\s*)?[a-zà-ÿа-яё]{3,12}[\s,;]+){7,}(?:\d{1,2}[.)]?\s*)?[a-zà-ÿа-яё]{3,12}"
)


_2FA_HINTS = (
    "totp",
    "2fa",
    "two",
    "otp",
    "authenticator",
    "seed",
    "secret",
    "mfa",
    "clé",
    "ключ",
    "секрет",
    "secreto",
    "clave",
    "key",
    "código",
    "code",
    "двухфактор",
    "2фа",
)
_BACKUP_HINTS = ("code", "код", "códig", "codig")
_SEED_HINTS = ("seed", "mnemonic", "phrase", "фраз", "frase", "palabras", "mots", "сид")


def backup_label(low: str, text: str) -> re.Match[str] | None:
    return _BACKUP.search(text) if any(h in low for h in _BACKUP_HINTS) else None


def seed_label(low: str, text: str) -> re.Match[str] | None:
    return _SEED_WORDS.search(text) if any(h in low for h in _SEED_HINTS) else None


def two_factor(text: str, low: str) -> Iterator[Span]:
    if "otpauth" in low:
        for m in _OTPAUTH.finditer(text):
            yield m.start(), m.end(), "totp_seed"
    if any(h in low for h in _2FA_HINTS) and _B32_HINT.search(text):
        for m in _BASE32.finditer(text):
            raw = re.sub(r"[\s=-]", "", m.group(0))
            if len(raw) >= 16 and any(c.isdigit() for c in raw) and any(c.isalpha() for c in raw):
                yield m.start(), m.end(), "totp_seed"
        for m in _BASE32_LOW.finditer(text):
            if any(c.isdigit() for c in m.group(0)):
                yield m.start(), m.end(), "totp_seed"
    if label := backup_label(low, text):
        for m in _CODE_ITEM.finditer(text, label.end()):
            yield m.start(), m.end(), "backup_code"
    if label := seed_label(low, text):
        if run := _SEED_RUN.search(text, label.end()):
            yield run.start(), run.end(), "seed_phrase"
