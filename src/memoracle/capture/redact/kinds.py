"""Secrets by kind where no fixed shape says it: secret words in prose, settings in any
quoting, CLI shapes, high-entropy strings, base64 that decodes to credentials, and the
neighbour of a value already found (the secret after its key id, a card's expiry and
CVV). Each finder takes the text and its lower case and yields (start, end, kind)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator

from memoracle.capture.redact.ids import identity_numbers, two_factor
from memoracle.capture.redact.loose import (
    SECRET_TALK,
    code_numbers,
    id_after_name,
    named_values,
    passphrases,
    secret_talk,
    seed_words,
)
from memoracle.capture.redact.words import (
    GAP,
    LABEL,
    LABEL_HINTS,
    LINK,
    NOT_AFTER_CODE,
    NOT_SECRET_CODES,
    UNITS,
    VALUE,
    bare,
    digits_code,
    entropy,
    generated,
    plausible,
)

Span = tuple[int, int, str]
Finder = Callable[[str, str], Iterable[Span]]

__all__ = ["FINDERS", "NEIGHBOUR_KINDS", "neighbours"]

_LINKED = re.compile(rf"(?P<gap>{GAP})(?P<link>{LINK}){VALUE}", re.IGNORECASE)
_ADJACENT = re.compile(rf"(?P<gap>{GAP})(?P<link>(?!))?[ \t]+{VALUE}", re.IGNORECASE)
_LOGIN_BEFORE = re.compile(
    r"(?:login|user(?:name)?|логин|пользователь|identifiant|utilisateur|usuario|user\s*id)"
    r"\s*[:=]?\s*\S+[\s,;/]*$",
    re.IGNORECASE,
)


def _span(text: str, match: re.Match[str]) -> tuple[int, int]:
    """The value's span without its quotes or the sentence's closing punctuation."""
    start, end = match.span("value")
    value = text[start:end]
    if value[:1] in "\"'«“`":
        return start + 1, end - 1
    while end > start and text[end - 1] in ".,;:!?)»”":
        end -= 1
    return start, end


def _value_ok(kind: str, text: str, label: re.Match[str], m: re.Match[str]) -> bool:
    value = m["value"]
    linked = m["link"] is not None
    if text[label.start() - 1 : label.start()] in ("=", "-", "_", "."):
        return False
    if kind == "pw":
        if linked:
            return plausible(value)
        if "/" in value:
            return False
        before = text[max(0, label.start() - 40) : label.start()]
        if bare(value).isdigit() and len(bare(value)) >= 6:
            return True
        return generated(value) or (plausible(value) and _LOGIN_BEFORE.search(before) is not None)
    if kind == "code":
        before = text[max(0, label.start() - 30) : label.start()]
        if NOT_SECRET_CODES.search(before) or NOT_AFTER_CODE.match(text, label.end()):
            return False
        if UNITS.match(text, m.end("value")):
            return False
        word = label.group(0).lower()
        if digits_code(value):
            return linked or word not in ("code", "codes", "код", "código", "codigo", "clave")
        return linked and generated(value) and any(c.isdigit() for c in value)
    return generated(value) and (linked or len(bare(value)) >= 8)


def _prose(text: str, low: str) -> Iterator[Span]:
    if not any(h in low for h in LABEL_HINTS):
        return
    for label in LABEL.finditer(text):
        kind = label.lastgroup or "key"
        m = _LINKED.match(text, label.end()) or _ADJACENT.match(text, label.end())
        if m is None or not m["value"].strip():
            continue
        if not _value_ok(kind, text, label, m):
            continue
        start, end = _span(text, m)
        yield start, end, {"pw": "password", "code": "code", "key": "secret"}[kind]


_USE = re.compile(
    r"(?<!\w)(?i:use|utilise[zr]?|usa|utiliza|используй(?:те)?|введи(?:те)?|enter|type|tape[zr]?)"
    rf"\s+{VALUE}\s+(?i:to\s+(?:log|sign)\s*in|to\s+(?:connect|unlock|get\s+in)"
    r"|as\s+(?:the\s+|my\s+|your\s+)?(?:password|pass|pin|code|login)"
    r"|pour\s+(?:te\s+|vous\s+|se\s+)?(?:connecter|identifier|entrer|d[ée]verrouiller)"
    r"|comme\s+(?:mot\s+de\s+passe|code|mdp)|para\s+(?:entrar|acceder|iniciar\s+sesi[óo]n"
    r"|conectarte|desbloquear)|como\s+(?:contraseña|clave|pin|código)"
    r"|для\s+входа|чтобы\s+(?:войти|зайти)|как\s+пароль|в\s+качестве\s+пароля)"
)


_USE_HINTS = (
    "log", "sign", "connect", "unlock", "get in", "pass", "pin", "code", "connecter",
    "identifier", "entrer", "verrouiller", "mdp", "entrar", "acceder", "sesi", "conectar",
    "desbloquear", "contrase", "clave", "código", "входа", "войти", "зайти", "пароль",
)  # fmt: skip


def _use_to_log_in(text: str, low: str) -> Iterator[Span]:
    if not any(h in low for h in _USE_HINTS):
        return
    for m in _USE.finditer(text):
        if plausible(m["value"]):
            yield (*_span(text, m), "password")


# A setting in any quoting: "password": "x", 'pin' => '1234', pass=x in an INI line.
_SETTING = re.compile(
    r"(?P<q>[\"'])(?i:[\w.-]*(?:password|passwd|pwd|pass|passcode|pin|secret|token|api_?key"
    r"|apikey|private_?key|access_?key|auth|credentials?|otp|totp|seed|mnemonic|motdepasse"
    r"|mot_de_passe|contrase[ñn]a|clave|пароль))(?P=q)"
    r"\s*(?::|=>?|,)\s*(?P<value>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"',;}\]]{3,256})"
)


def _quoted_settings(text: str, low: str) -> Iterator[Span]:
    if '"' not in text and "'" not in text:
        return
    for m in _SETTING.finditer(text):
        value = bare(m["value"])
        if (
            len(value) >= 3
            and plausible(value)
            and value.lower() not in ("null", "none", "true", "false")
        ):
            yield (*_span(text, m), "password")


_CLI = re.compile(
    r"(?:sshpass\s+-p\s*|(?<!\S)(?:-u|--user)\s+['\"]?[^\s:'\"]+:|(?<!\S)-U\s+\S+?%"
    r"|WIFI:(?:[^;\n]*;)*?P:|(?<!\S)/user:\S+\s+|htpasswd(?:\s+-\w+)+\s+\S+\s+\S+\s+"
    r"|(?i:--(?:pass(?:word)?|token|api-?key|secret|pin)(?:=|\s+)))"
    r"(?P<value>'[^'\n]+'|\"[^\"\n]+\"|(?:\\.|[^\s;'\"\\@])+)"
)


def _cli(text: str, low: str) -> Iterator[Span]:
    if not any(h in low for h in ("sshpass", "-u", "wifi:", "/user:", "htpasswd", "--")):
        return
    for m in _CLI.finditer(text):
        value = bare(m["value"])
        if len(value) >= 3 and not value.startswith(("-", "$")):
            yield (*_span(text, m), "password")


_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{12,}={0,2}(?![A-Za-z0-9+/=_-])")
_CRED = re.compile(r"^[\w.@+-]{1,64}:[^\s{}\"]{3,}$|pass|secret|token|key=|pwd", re.IGNORECASE)


def _encoded(text: str, low: str) -> Iterator[Span]:
    if _DIGIT.search(text) is None and "=" not in text:
        return
    for m in _B64.finditer(text):
        token = m.group(0)
        if len(token) % 4 or token.isalpha() and token.islower():
            continue
        try:
            decoded = base64.b64decode(token, validate=True).decode("ascii")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if decoded.isprintable() and _CRED.search(decoded):
            yield m.start(), m.end(), "encoded_secret"


_CONTEXT = re.compile(
    r"(?i:key|token|secret|api|password|passwd|credential|bearer|auth|ключ|токен|секрет|пароль"
    r"|cl[ée]|jeton|clave|llave|secreto|contraseña|mdp|private|priv[ée]e?|privada|приватн"
    r"|wallet|portefeuille|кошел[её]к|cartera|billetera)"
)
_TOKEN = re.compile(r"(?<![\w/+.-])[A-Za-z0-9][A-Za-z0-9_\-+/.]{15,}={0,2}(?![\w/+=-])")
_PREFIXED = re.compile(r"^[A-Za-z][A-Za-z0-9]{1,11}[_.-](?:[A-Za-z0-9]{1,10}[_.-]){0,3}")
# Public by design: an SSH public key's body, a fingerprint or integrity hash, an image
# inlined as base64, a publishable key.
_PUBLIC = re.compile(r"^(?:AAAA|ssh-|ecdsa-|sha\d{3}-|SHA256:|pk_(?:live|test)_)")
_PUBLIC_BEFORE = re.compile(r"(?:base64,|SHA256:|sha\d{3}-|fingerprint\s+is\s+\S*|ssh-\w+\s+)$")
_HEX = re.compile(r"^(?:[0-9a-f]+|[0-9A-F]+|[0-9a-f-]{36})$")


_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?!(?:[A-Z0-9]+ )*PRIVATE)[A-Z0-9 ]+-----.*?(?:-----END [A-Z0-9 ]+-----|\Z)",
    re.DOTALL,
)


_DIGIT = re.compile(r"\d")


def _high_entropy(text: str, low: str) -> Iterator[Span]:
    if _DIGIT.search(text) is None:
        return
    public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)] if "-----begin" in low else []
    for m in _TOKEN.finditer(text):
        if any(s <= m.start() < e for s, e in public):
            continue  # a certificate or public key
        token = m.group(0).rstrip(".")
        if _PUBLIC.match(token) or _PUBLIC_BEFORE.search(text, max(0, m.start() - 40), m.start()):
            continue
        if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)):
            continue
        if "/" in token and token.count("/") > 1 and "." in token:
            continue  # a path
        if re.search(r"\.(?:py|js|ts|md|txt|json|html?|jpe?g|png|pdf|zip|csv|log)$", token, re.I):
            continue
        near = _CONTEXT.search(text, max(0, m.start() - 100), m.start()) is not None
        upper = any(c.isupper() for c in token) and any(c.islower() for c in token)
        if _HEX.match(token):
            if near and len(token) >= 20:
                yield m.start(), m.start() + len(token), "secret"
            continue
        score = entropy(token)
        prefix = _PREFIXED.match(token)
        if near and score >= 3.3:
            yield m.start(), m.start() + len(token), "secret"
        elif prefix and len(token) - prefix.end() >= 32 and score >= 3.8:
            yield m.start(), m.start() + len(token), "token"
        elif not prefix and len(token) >= 32 and upper and score >= 4.3 and "." not in token:
            yield m.start(), m.start() + len(token), "token"


# A password on the line after a user name.
_USER_LINE = re.compile(
    r"(?im)^[ \t]*(?:[-*•][ \t]*)?(?:user(?:name)?|login|логин|пользователь|identifiant"
    r"|utilisateur|usuario|email|e-mail)[ \t]*[:=—-]?[ \t]*\S+[ \t]*\n[ \t]*(?:[-*•][ \t]*)?"
    r"(?P<value>\S{4,64})[ \t]*$"
)


def _after_user_line(text: str, low: str) -> Iterator[Span]:
    if "\n" not in text:
        return
    for m in _USER_LINE.finditer(text):
        if generated(m["value"]) and ":" not in m["value"]:
            yield (*_span(text, m), "password")


_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_LINE = re.compile(r"[A-Za-z0-9+/=]{16,}[ \t]*")


_PPK = re.compile(r"Private-Lines:[ \t]*\d+[ \t]*\n(?:[ \t]*[A-Za-z0-9+/=]+[ \t]*(?:\n|$))+")


def _pem_tail(text: str, low: str) -> Iterator[Span]:
    """The end of a private key whose beginning is elsewhere (split at a blank line):
    the base64 lines before its END line, and that line; a PuTTY key's private lines."""
    if "private-lines" in low:
        for m in _PPK.finditer(text):
            yield m.start(), m.end(), "private_key"
    if "-----end" not in low:
        return
    for m in _PEM_END.finditer(text):
        start = m.start()
        lines = text[: m.start()].split("\n")
        for line in reversed(lines[:-1] if not lines[-1].strip() else lines):
            if line.strip() and not _KEY_LINE.fullmatch(line.strip()):
                break
            start -= len(line) + 1
        yield max(start, 0), m.end(), "private_key"


_CHANGED = re.compile(
    r"(?i:changed?|set|updated?|reset|сменил\w*|поменял\w*|изменил\w*|chang[ée]\w*|modifi[ée]\w*"
    r"|cambi[ée]\w*|cambiad\w*|mis|puesto)(?!\w)[^.\n]{0,60}?[ \t](?:to|на|en|à|a|por)[ \t]+"
    + VALUE
)
_FROM = re.compile(
    r"(?i:from|de|с|со|от|del)[ \t]+(?P<value>\S{4,64})[ \t]+(?i:to|a|à|на|en|por)[ \t]"
)


def _changed_to(text: str, low: str) -> Iterator[Span]:
    """A password changed (from one value) to another."""
    if not SECRET_TALK.search(text):
        return
    for m in _CHANGED.finditer(text):
        value = bare(m["value"])
        if generated(value) or value.isdigit() and len(value) >= 6:
            yield (*_span(text, m), "password")
            if old := _FROM.search(text, m.start(), m.start("value")):
                if generated(old["value"]) or old["value"].isdigit():
                    yield old.start("value"), old.end("value"), "password"


FINDERS: tuple[tuple[Finder, tuple[str, ...]], ...] = (
    (_pem_tail, ("private_key",)),
    (_cli, ("password",)),
    (_quoted_settings, ("password",)),
    (named_values, ("secret",)),
    (identity_numbers, ("national_id",)),
    (id_after_name, ("national_id",)),
    (two_factor, ("totp_seed", "backup_code", "seed_phrase")),
    (seed_words, ("seed_phrase",)),
    (passphrases, ("password",)),
    (_prose, ("password", "code", "secret")),
    (_changed_to, ("password",)),
    (_use_to_log_in, ("password",)),
    (_after_user_line, ("password",)),
    (_encoded, ("encoded_secret",)),
    (_high_entropy, ("secret", "token")),
    (code_numbers, ("code",)),
    (secret_talk, ("password",)),
)

# ------------------------------------------------------------------ neighbours

NEIGHBOUR_KINDS = ("card_expiry", "card_cvv", "secret")
_PAIRED = ("aws_access_key_id", "twilio_key", "secret", "token", "api_key_id")
_EXPIRY = re.compile(r"(?<![\d/])(?:0[1-9]|1[0-2])\s?/\s?(?:\d{4}|\d{2})(?![\d/])")
_CVV = re.compile(r"(?<![\d/.,-])\d{3,4}(?![\d/.,-]|\s?(?:€|\$|eur|usd|%))", re.IGNORECASE)
_SECOND = re.compile(r"(?<![\w/+=-])[A-Za-z0-9/+=_-]{16,}(?![\w/+=-])")
_KEY_ID = re.compile(
    r"(?i:key[\s_-]?id|access[\s_-]?key|client[\s_-]?id|account[\s_-]?sid|app[\s_-]?id"
    r"|api[\s_-]?key)\s*[:=]?\s*[\"']?(?P<id>[A-Za-z0-9_-]{12,})"
)


def neighbours(text: str, low: str, found: list[Span]) -> Iterator[Span]:
    """The second half of a pair whose first half was found (or is an id)."""
    anchors = [(e, k) for _, e, k in found]
    anchors += [(m.end(), "api_key_id") for m in _KEY_ID.finditer(text)]
    for end, kind in anchors:
        window = text[end : end + 160]
        if kind == "card_number":
            for m in _EXPIRY.finditer(window):
                yield end + m.start(), end + m.end(), "card_expiry"
            rest = _EXPIRY.sub(lambda m: " " * len(m.group(0)), window[:90])
            if m2 := _CVV.search(rest):
                yield end + m2.start(), end + m2.end(), "card_cvv"
        elif kind in _PAIRED:
            for m in _SECOND.finditer(window):
                token = m.group(0)
                if (
                    any(c.isdigit() for c in token)
                    and any(c.isalpha() for c in token)
                    and entropy(token) >= 3.3
                    and not token.startswith("REDACTED")
                ):
                    yield end + m.start(), end + m.end(), "secret"
                    break
