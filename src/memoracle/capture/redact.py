"""Secrets out of text before anything is stored or indexed.

Owns the list of secret formats (API keys and tokens of common services, JWTs,
Authorization headers, passwords in URLs, PEM private keys, passwords after a label in
English, Russian, French and Spanish, Luhn-valid card numbers) and their replacement by
"[REDACTED:<kind>]". Only the secret goes: labels, user names and hosts stay, so
"password: hunter2" keeps "password: " and "postgres://app:s3cret@db" keeps "app" and
"db". Deciding what happens to a redacted turn (an audit record) is the engine's job.

Each format names cheap substrings ("sk-", "ghp_", "://") that must occur before its
pattern runs, so ordinary text pays for a few `in` checks and no regex. Where formats
overlap, the earlier, more specific one wins: "Authorization: Bearer sk-..." reports
"openai_key", not "auth_header".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["KINDS", "Redaction", "redact"]


@dataclass(frozen=True)
class Redaction:
    """`text` with each secret replaced by "[REDACTED:<kind>]"; `kinds` found, in text
    order, each once (e.g. ("openai_key", "password")). No secret: the text unchanged."""

    text: str
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class _Format:
    kind: str
    pattern: re.Pattern[str]
    # Lower-case substrings, one of which must occur for the pattern to run; empty: none.
    hints: tuple[str, ...]
    # Runs only if the text has a run of four digits.
    digits: bool = False
    # Accepts or rejects the secret text (e.g. the Luhn check).
    check: Callable[[str], bool] | None = None


# Where a key starts: not in the middle of a word or another token ("task-..." has "sk-").
_START = r"(?<![A-Za-z0-9_-])"
_END = r"(?![A-Za-z0-9_-])"
_DIGITS4 = re.compile(r"\d{4}")

# After a password label, a value that is a word of the sentence, not a password.
_NOT_PASSWORDS = frozenset(
    """
    required wrong incorrect invalid correct too not set stored saved the a an same empty
    expired weak strong changed reset case missing needed ok okay fine protected hashed
    encrypted long short different also still now being been generated sent shown hidden
    secure in on at for of and or to my your his her our their this that it here there
    below above simple easy hard known unknown mandatory optional case-sensitive please
    неверный неправильный верный правильный не слишком такой тот же пустой изменён изменен
    сброшен нужен обязателен был в на от для ниже выше мой твой
    incorrect correct invalide requis obligatoire trop pas le la les un une mon ton son vide
    expiré changé oublié dans sur ci-dessous
    incorrecta correcta inválida invalida requerida obligatoria demasiado no el mi tu su
    vacía caducada cambiada en de para abajo
    """.split()
)


def _luhn(candidate: str) -> bool:
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19 or digits[0] not in (2, 3, 4, 5, 6):
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _plausible_password(value: str) -> bool:
    if value[0] in "\"'«“":
        return True
    return value.lower().rstrip(".,;:!?)") not in _NOT_PASSWORDS


def _mixed(value: str) -> bool:
    """A generated secret has letters and digits; "token: none" and "key = my_setting" not."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# One token, or a quoted string. "&" ends it only before another "key=" (a query string).
_PASSWORD_VALUE = (
    r"(?P<secret>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|«[^»\n]{1,128}»|“[^”\n]{1,128}”"
    r"|[^\s\"'«“,;]{1,128}?)(?=[.,;:!?)]?(?:\s|$)|[,;]|&\w+=)"
)
# After an explicit "password: " the value may be a passphrase of several words: it runs
# to the end of the clause, and no word is taken for ordinary prose.
_PASSPHRASE = (
    r"(?P<secret>[^\s\"'«“][^\n]{0,127}?)"
    r"(?=\s*(?:$|\n|[.;,](?:\s|$)|\s+(?:and|but|и|но|а|et|mais|y|pero)\s))"
)
_FOR_SOMETHING = r"(?:\s+(?:for|to|of|on|от|для|к|de|du|pour|del|para)\s+[\w.@-]+)?"

_FORMATS: tuple[_Format, ...] = (
    _Format(
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
            re.DOTALL,
        ),
        ("private key",),
    ),
    _Format(
        "anthropic_key",
        re.compile(rf"{_START}sk-ant-[A-Za-z0-9_-]{{20,}}{_END}"),
        ("sk-ant-",),
    ),
    _Format(
        "openai_key",
        re.compile(
            rf"{_START}sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]*\d)"
            rf"[A-Za-z0-9_-]{{20,}}{_END}"
        ),
        ("sk-",),
    ),
    _Format(
        "github_token",
        re.compile(
            rf"{_START}(?:gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}}){_END}"
        ),
        ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"),
    ),
    _Format(
        "gitlab_token",
        re.compile(rf"{_START}glpat-[A-Za-z0-9_-]{{20,}}{_END}"),
        ("glpat-",),
    ),
    _Format(
        "slack_token",
        re.compile(rf"{_START}xox[abprs]-(?:[A-Za-z0-9]+-)+[A-Za-z0-9]+{_END}"),
        ("xox",),
    ),
    _Format(
        "stripe_key",
        re.compile(rf"{_START}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}{_END}"),
        ("_live_", "_test_"),
    ),
    _Format(
        "google_api_key",
        re.compile(rf"{_START}AIza[A-Za-z0-9_-]{{35}}{_END}"),
        ("aiza",),
    ),
    _Format(
        "huggingface_token",
        re.compile(rf"{_START}hf_[A-Za-z0-9]{{30,}}{_END}"),
        ("hf_",),
    ),
    _Format(
        "npm_token",
        re.compile(rf"{_START}npm_[A-Za-z0-9]{{36}}{_END}"),
        ("npm_",),
    ),
    _Format(
        "sendgrid_key",
        re.compile(rf"{_START}SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}{_END}"),
        ("sg.",),
    ),
    _Format(
        "jwt",
        re.compile(
            rf"{_START}eyJ[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{16,}}{_END}"
        ),
        ("eyj",),
    ),
    _Format(
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("akia", "asia", "abia", "acca"),
    ),
    _Format(
        "aws_secret_key",
        re.compile(
            r"(?i:aws_secret_access_key|aws_secret_key|secret_access_key|secretaccesskey)"
            r"[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret_access_key", "aws_secret", "secretaccesskey"),
    ),
    _Format(
        "telegram_bot_token",
        re.compile(r"(?<![\w:])\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
        (":",),
        digits=True,
    ),
    _Format(
        "url_password",
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s/@]+)@"),
        ("://",),
    ),
    _Format(
        "auth_header",
        re.compile(
            r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token|digest)\s+"
            r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})"
        ),
        ("authorization",),
    ),
    _Format(
        "bearer_token",
        re.compile(r"(?<!\w)(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]{20,})"),
        ("bearer",),
        check=_mixed,
    ),
    _Format(
        "secret",
        re.compile(
            r"(?i:api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|access[_-]?token"
            r"|auth[_-]?token|secret|token)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9_\-./+=]{16,})"
        ),
        ("key", "secret", "token"),
        check=_mixed,
    ),
    _Format(
        "password",
        re.compile(
            r"(?<!\w)(?i:"
            rf"(?:password|passwd|passcode|passphrase|pwd|пароль|mot\s+de\s+passe|mdp"
            rf"|contraseña|contrasena|clave){_FOR_SOMETHING}"
            r"(?:\s+(?:is|was|это|est|es))?\s*[:=]\s*"
            rf"){_PASSPHRASE}"
        ),
        ("pass", "pwd", "пароль", "mot de passe", "mdp", "contraseña", "contrasena", "clave"),
    ),
    _Format(
        "password",
        re.compile(
            r"(?<!\w)(?i:"
            rf"(?:password|passwd|passcode|passphrase|pwd){_FOR_SOMETHING}"
            r"(?:\s*[:=]\s*|\s+(?:is|was)\s*:?\s*)"
            rf"|пароль{_FOR_SOMETHING}(?:\s*[:=—–-]\s*|\s+это\s*:?\s*)"
            rf"|(?:mot\s+de\s+passe|mdp){_FOR_SOMETHING}(?:\s*[:=]\s*|\s+est\s*:?\s*)"
            rf"|(?:contraseña|contrasena|clave){_FOR_SOMETHING}(?:\s*[:=]\s*|\s+es\s*:?\s*)"
            rf"){_PASSWORD_VALUE}"
        ),
        ("pass", "pwd", "пароль", "mot de passe", "mdp", "contraseña", "contrasena", "clave"),
        check=_plausible_password,
    ),
    _Format(
        "card_number",
        re.compile(r"(?<![\d.-])\d(?:[ -]?\d){12,18}(?![\d-]|[.,]\d)"),
        (),
        digits=True,
        check=_luhn,
    ),
)

KINDS: tuple[str, ...] = tuple(dict.fromkeys(f.kind for f in _FORMATS))


def redact(text: str) -> Redaction:
    """Replace every secret in `text` by "[REDACTED:<kind>]", keeping the text around it."""
    low = text.lower()
    has_digits: bool | None = None
    found: list[tuple[int, int, str]] = []
    for fmt in _FORMATS:
        if fmt.hints and not any(h in low for h in fmt.hints):
            continue
        if fmt.digits:
            if has_digits is None:
                has_digits = _DIGITS4.search(text) is not None
            if not has_digits:
                continue
        for match in fmt.pattern.finditer(text):
            group = "secret" if "secret" in fmt.pattern.groupindex else 0
            start, end = match.span(group)
            if fmt.check is not None and not fmt.check(match[group]):
                continue
            if all(end <= s or start >= e for s, e, _ in found):
                found.append((start, end, fmt.kind))
    if not found:
        return Redaction(text, ())
    found.sort()
    parts: list[str] = []
    last = 0
    for start, end, kind in found:
        parts += [text[last:start], f"[REDACTED:{kind}]"]
        last = end
    parts.append(text[last:])
    return Redaction("".join(parts), tuple(dict.fromkeys(kind for _, _, kind in found)))
