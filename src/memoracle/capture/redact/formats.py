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

__all__ = ["FORMATS", "Format", "is_code", "luhn"]


@dataclass(frozen=True)
class Format:
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
    none null nil true false undefined и а но или да нет потом после ничего et ou y o
    неверный неправильный верный правильный не слишком такой тот же пустой изменён изменен
    сброшен нужен обязателен был в на от для ниже выше мой твой
    incorrect correct invalide requis obligatoire trop pas le la les un une mon ton son vide
    expiré changé oublié dans sur ci-dessous
    incorrecta correcta inválida invalida requerida obligatoria demasiado no el mi tu su
    vacía caducada cambiada en de para abajo
    """.split()
)


# Values of a secret-named setting that are not a secret.
_NOT_SETTINGS = frozenset(
    "none null nil true false yes no empty unset required optional changeme xxx xxxx "
    "redacted hidden secret password token example placeholder undefined".split()
)


# Card numbers the payment services publish for tests ("4242 4242 4242 4242 works in
# test mode"): not anyone's card.
_TEST_CARDS = frozenset(
    "4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210"
    " 4000000000000002 4000000000009995 4000000000000069 4000000000000127 4000000000000119"
    " 4000002500003155 4000000000003220 4000000000000077".split()
)


def luhn(candidate: str) -> bool:
    if "".join(c for c in candidate if c.isdigit()) in _TEST_CARDS:
        return False
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19 or digits[0] not in (2, 3, 4, 5, 6):
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _iban(candidate: str) -> bool:
    """ISO 13616: 15 to 34 characters whose mod-97 check (country and check digits moved
    to the end, letters as 10..35) is 1; a random code passes one time in 97."""
    value = candidate.replace(" ", "")
    if not 15 <= len(value) <= 34 or not value[4:].isalnum():
        return False
    moved = value[4:] + value[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


_CONJUNCTIONS = frozenset("and or but и а но или et ou mais y o pero".split())


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


# Code, not a value: a call ("getpass.getpass()", "input(...)"), an attribute or item
# ("self.password", "form['pw']"), a reference ("${VAR}", "%(pw)s").
_CODE_VALUE = re.compile(r"^[A-Za-z_][\w.]*\(|^[a-z_]\w*(?:\.[a-z_]\w*)+$|[\[\]]|^[$<{%(]")


_PLACEHOLDER = re.compile(
    r"^(?:[*•x#.]{3,}|\**|\.{3}|.*(?:your|here|example|placeholder|changeme|redacted).*)$",
    re.IGNORECASE,
)


# Public by design: an SSH public key, a fingerprint or an integrity hash.
_PUBLIC_VALUE = re.compile(
    r"^(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2|AAAA[A-Za-z0-9+/]{16}|sha\d{3}-|SHA256:)"
)


def is_code(value: str) -> bool:
    """Code, a reference, a placeholder ("your_api_key_here", "********"), the next
    setting's name ("KEY=") or a public key, not a value."""
    bare = value.strip("\"'")
    return (
        _CODE_VALUE.search(bare) is not None
        or _PLACEHOLDER.match(bare) is not None
        or _PUBLIC_VALUE.match(bare) is not None
        or bare.endswith(("=", ":"))
    )


def _setting_value(value: str) -> bool:
    """The value of a secret-named setting, unless it is a placeholder or a reference
    ("${DB_PASSWORD}", "<your key>", "os.environ[...]", "true", "none")."""
    bare = value.strip("\"'")
    if len(bare) < 3 or bare[0] in "$<{%[(" or bare.startswith(("os.", "env.", "process.")):
        return False
    return bare.lower() not in _NOT_SETTINGS and not is_code(bare)


def _plausible_password(value: str) -> bool:
    if value[0] in "\"'«“":
        return not is_code(value)
    return value.lower().rstrip(".,;:!?)") not in _NOT_PASSWORDS and not is_code(value)


def _plausible_phrase(value: str) -> bool:
    """A passphrase's first word is not one of the sentence ("the passphrase is required")."""
    return _plausible_password(value.split()[0])


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
# A setting named like a secret: "DATABASE_PASSWORD=", "smtp.pass:", "\"client_secret\": ".
# The name is upper case or has a separator, so prose ("the token: none") is not one.
_SETTING_VALUE = (
    r"[\"']?[ \t]*[:=][ \t]*(?P<secret>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"',;&]{1,256})"
)


def _setting(names: str) -> str:
    """The pattern of a setting whose name ends in one of `names` (lower case, no
    escapes): "smtp_password:" or "DB_PASS=", not "password:" alone (prose's)."""
    return (
        rf"(?<![\w.-])(?:(?:[A-Za-z0-9]+[_.-])+(?i:{names})|(?:[A-Z0-9]+_)*(?:PG|MYSQL_?|SSH|SMB|REDIS)?(?:{names.upper()}))"
        + _SETTING_VALUE
    )


# Labels that say a number is a door, alarm, safe or card code, in four languages.
_CODE_LABELS = (
    r"(?:door|gate|alarm|garage|safe|locker|lock|entry|entrance|building|intercom|keypad"
    r"|keybox|lockbox|access|security|house|front\s+door)\s+(?:code|pin|passcode)"
    r"|(?:bank|card|debit|credit|atm|sim|phone|bank\s+card)\s+pin(?:\s+code)?|pin\s+code"
    r"|digicode|(?:пин|pin)[-\s]?код"
    r"|код\s+(?:от\s+)?(?:двери|подъезда|домофона|сигнализации|сейфа|замка|калитки|ворот"
    r"|квартиры|карты)"
    r"|code\s+(?:de\s+(?:la\s+|l['’]\s*)?)?(?:porte|portail|alarme|immeuble|entrée|bâtiment"
    r"|coffre|cadenas|carte)|code\s+(?:pin|secret|confidentiel)"
    r"|c[óo]digo\s+(?:de\s+(?:la\s+|el\s+)?)?(?:puerta|alarma|portal|entrada|edificio"
    r"|caja\s+fuerte|candado|tarjeta)|c[óo]digo\s+(?:pin|secreto)"
)
_FOR_SOMETHING = r"(?:\s+(?:for|to|of|on|от|для|к|de|du|pour|del|para)\s+[\w.@-]+)?"

FORMATS: tuple[Format, ...] = (
    Format(
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
            re.DOTALL,
        ),
        ("private key",),
    ),
    Format(
        "anthropic_key",
        re.compile(rf"{_START}sk-ant-[A-Za-z0-9_-]{{20,}}{_END}"),
        ("sk-ant-",),
    ),
    Format(
        "openai_key",
        re.compile(
            rf"{_START}sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]*\d)"
            rf"[A-Za-z0-9_-]{{20,}}{_END}"
        ),
        ("sk-",),
    ),
    Format(
        "github_token",
        re.compile(
            rf"{_START}(?:gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}}){_END}"
        ),
        ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"),
    ),
    Format(
        "gitlab_token",
        re.compile(rf"{_START}glpat-[A-Za-z0-9_-]{{20,}}{_END}"),
        ("glpat-",),
    ),
    Format(
        "slack_token",
        re.compile(rf"{_START}xox[abprs]-(?:[A-Za-z0-9]+-)+[A-Za-z0-9]+{_END}"),
        ("xox",),
    ),
    Format(
        "stripe_key",
        re.compile(rf"{_START}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}{_END}"),
        ("_live_", "_test_"),
    ),
    Format(
        "google_api_key",
        re.compile(rf"{_START}AIza[A-Za-z0-9_-]{{35}}{_END}"),
        ("aiza",),
    ),
    Format(
        "huggingface_token",
        re.compile(rf"{_START}hf_[A-Za-z0-9]{{30,}}{_END}"),
        ("hf_",),
    ),
    Format(
        "npm_token",
        re.compile(rf"{_START}npm_[A-Za-z0-9]{{36}}{_END}"),
        ("npm_",),
    ),
    Format(
        "sendgrid_key",
        re.compile(rf"{_START}SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}{_END}"),
        ("sg.",),
    ),
    Format(
        "twilio_key",
        re.compile(rf"{_START}(?:SK|AC)[0-9a-f]{{32}}{_END}"),
        ("sk", "ac"),
        check=_has_digit,
    ),
    Format(
        "mailgun_key",
        re.compile(rf"{_START}key-[0-9a-f]{{32}}{_END}"),
        ("key-",),
    ),
    Format(
        "digitalocean_token",
        re.compile(rf"{_START}do[opr]_v1_[0-9a-f]{{64}}{_END}"),
        ("_v1_",),
    ),
    Format(
        "shopify_token",
        re.compile(rf"{_START}shp(?:at|ca|pa|ss)_[0-9a-fA-F]{{32}}{_END}"),
        ("shp",),
    ),
    Format(
        "pypi_token",
        re.compile(rf"{_START}pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{{40,}}{_END}"),
        ("pypi-",),
    ),
    Format(
        "discord_token",
        re.compile(
            rf"{_START}[MNO][A-Za-z0-9_-]{{23,27}}\.[A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,40}}{_END}"
        ),
        (".",),
        check=_mixed,
    ),
    Format(
        "webhook_url",
        re.compile(
            r"https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/"
            r"|[\w.-]*webhook\.office\.com/webhookb2/)(?P<secret>[A-Za-z0-9_/@.-]{16,})"
        ),
        ("hooks.slack", "webhooks/", "webhookb2"),
    ),
    Format(
        "azure_key",
        re.compile(
            r"(?i:accountkey|sharedaccesskey|accesskey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"
        ),
        ("accountkey", "accesskey"),
    ),
    Format(
        "url_signature",
        re.compile(
            r"[?&](?:sig|signature|x-amz-signature|x-goog-signature)="
            r"(?P<secret>[A-Za-z0-9%+/=_-]{16,})",
            re.IGNORECASE,
        ),
        ("sig",),
    ),
    Format(
        "jwt",
        re.compile(
            rf"{_START}eyJ[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{16,}}{_END}"
        ),
        ("eyj",),
    ),
    Format(
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("akia", "asia", "abia", "acca"),
    ),
    Format(
        "aws_secret_key",
        re.compile(
            r"(?i:aws_secret_access_key|aws_secret_key|secret_access_key|secretaccesskey)"
            r"[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret_access_key", "aws_secret", "secretaccesskey"),
    ),
    Format(
        "telegram_bot_token",
        re.compile(r"(?<![\w:])\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
        (":",),
        digits=True,
    ),
    Format(
        "url_password",
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^\s:/@]*@)?[^\s:/@]*:(?P<secret>[^\s/@]+)@"),
        ("://",),
    ),
    Format(
        "auth_header",
        re.compile(
            r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer|basic|token|digest)\s+"
            r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})"
        ),
        ("authorization",),
    ),
    Format(
        "bearer_token",
        re.compile(r"(?<!\w)(?i:bearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]{20,})"),
        ("bearer",),
        check=_mixed,
    ),
    Format(
        "password",
        re.compile(_setting("pass(?:word|wd|phrase|code)?|pwd|pw")),
        ("pass", "pwd", "pw"),
        check=_setting_value,
    ),
    Format(
        "secret",
        re.compile(
            _setting(
                "secret(?:[_-]?key)?|token|api[_-]?key|apikey|credentials?"
                "|(?:private|access|auth|signing|encryption|master|client|app|service"
                "|account|license)[_-]?key"
            )
        ),
        ("secret", "token", "key", "credential"),
        check=_setting_value,
    ),
    Format(
        "password",
        re.compile(
            r"(?<!\w)(?i:passphrase|pass\s+phrase|ключевая\s+фраза|кодовая\s+фраза"
            r"|фраза-пароль|phrase\s+secr[èe]te|phrase\s+de\s+passe"
            r"|frase\s+(?:de\s+contrase[ñn]a|secreta|de\s+paso))"
            r"(?:\s*[:=—–-]\s*|\s+(?:is|was|это|est|es)(?!\w)\s*:?\s*)"
            rf"{_PASSPHRASE}"
        ),
        ("phrase", "фраза"),
        check=_plausible_phrase,
    ),
    Format(
        "secret",
        re.compile(
            r"(?i:api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|access[_-]?token"
            r"|auth[_-]?token|secret|token)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9_\-./+=]{16,})"
        ),
        ("key", "secret", "token"),
        check=_mixed,
    ),
    Format(
        "password",
        re.compile(
            r"(?<!\w)(?i:"
            rf"(?:password|passwd|passcode|passphrase|pwd|пароль|mot\s+de\s+passe|mdp"
            rf"|contraseña|contrasena){_FOR_SOMETHING}"
            r"(?:\s+(?:is|was|это|est|es)(?!\w))?\s*[:=]\s*"
            rf"){_PASSPHRASE}"
        ),
        ("pass", "pwd", "пароль", "mot de passe", "mdp", "contraseña", "contrasena"),
        check=lambda v: not is_code(v.split()[0]) and v.split()[0].lower() not in _CONJUNCTIONS,
    ),
    Format(
        "password",
        re.compile(
            r"(?<!\w)(?i:"
            rf"(?:password|passwd|passcode|passphrase|pwd){_FOR_SOMETHING}"
            r"(?:\s*[:=]\s*|\s+(?:is|was)(?!\w)\s*:?\s*)"
            rf"|пароль{_FOR_SOMETHING}(?:\s*[:=—–-]\s*|\s+это(?!\w)\s*:?\s*)"
            rf"|(?:mot\s+de\s+passe|mdp){_FOR_SOMETHING}(?:\s*[:=]\s*|\s+est(?!\w)\s*:?\s*)"
            rf"|(?:contraseña|contrasena){_FOR_SOMETHING}(?:\s*[:=]\s*|\s+es(?!\w)\s*:?\s*)"
            rf"){_PASSWORD_VALUE}"
        ),
        ("pass", "pwd", "пароль", "mot de passe", "mdp", "contraseña", "contrasena"),
        check=_plausible_password,
    ),
    Format(
        "password",
        re.compile(
            r"(?<!\w)(?i:password|passwd|passcode|пароль|mot\s+de\s+passe|contraseña|contrasena)"
            r"\s+(?:for|to|of|on|от|для|к|de|du|pour|del|para)\s+(?:the\s+|la\s+|le\s+|el\s+|my\s+)?"
            r"[\w.@-]+\s+(?P<secret>[^\s\"'«“,;]{3,128}?)(?=[.,;:!?)]?(?:\s|$))"
        ),
        ("pass", "пароль", "mot de passe", "contrase"),
        check=lambda v: _has_digit(v) and _plausible_password(v),
    ),
    Format(
        "password",
        re.compile(r"(?<![\w-])(?i:pw)\s*[:=]\s*" + _PASSWORD_VALUE),
        ("pw",),
        check=_plausible_password,
    ),
    Format(  # "pass: " alone is also a boarding pass's: only a value with a digit or sign
        "password",
        re.compile(r"(?<![\w-])(?i:pass)\s*[:=]\s*" + _PASSWORD_VALUE),
        ("pass",),
        check=lambda v: _plausible_password(v) and not v.isalpha(),
    ),
    Format(
        "password",
        re.compile(
            r"(?<![\w-])(?i:pw|pwd)\s+(?P<secret>[^\s\"'«“,;]{3,128}?)(?=[.,;:!?)]?(?:\s|$))"
        ),
        ("pw",),
        check=_mixed,
    ),
    Format(
        "password",
        re.compile(
            r"(?<!\S)--(?:password|passwd|pass|token|api-key|secret)(?:=|\s+)"
            r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)"
        ),
        ("--pass", "--token", "--api-key", "--secret"),
        check=lambda v: not v.startswith("-") and _plausible_password(v),
    ),
    Format(
        "password",
        re.compile(r"(?:(?<!\S)-u\s*\S+\s+-p\s?|(?<!\S)-p)(?P<secret>[^\s\"'-][^\s\"']{2,127})"),
        ("-p",),
        check=lambda v: _mixed(v) and ":" not in v,
    ),
    Format(
        "code",
        re.compile(
            r"(?<![\w-])(?i:"
            rf"(?:{_CODE_LABELS})(?:\s+[^\W\d]+)?(?:\s*[:=—–-]\s*|\s+(?:is|was|это|est|es)(?!\w)\s*:?\s*|\s+)"
            r"|(?:pin|пин)(?:\s+(?:de|of|for|от|du|del|para)\s+(?:la\s+|the\s+|my\s+|mi\s+|ma\s+)?[^\W\d]+)?"
            r"(?:\s*[:=—–-]\s*|\s+(?:is|was|это|est|es)(?!\w)\s*:?\s*)"
            r")(?P<secret>\d{3,10})(?![\d]|[.,]\d)"
        ),
        ("code", "pin", "пин", "код", "código", "codigo"),
    ),
    Format(
        "iban",
        re.compile(
            r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?"
            r"(?![A-Za-z0-9])"
        ),
        (),
        digits=True,
        check=_iban,
    ),
    Format(
        "card_number",
        re.compile(r"(?<![\d.-])\d(?:[ -]?\d){12,18}(?![\d-]|[.,]\d)"),
        (),
        digits=True,
        check=luhn,
    ),
)
