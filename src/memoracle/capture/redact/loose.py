"""Secrets said loosely: a made-up password anywhere in a turn that talks about one
("is Tr1angle!Sky strong enough?", "the hint means it's Biscuit1418Elm"), a number near
a code word ("the gate opens with 7432 then #", "код подтверждения 807847"), flags,
settings, query parameters and XML elements named like a secret, an identity number
after its name, a passphrase said as a sentence, and a wallet's seed words."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memoracle.capture.redact.words import (
    NOT_AFTER_CODE,
    NOT_SECRET_CODES,
    STOP,
    UNITS,
    bare,
    is_code,
)

Span = tuple[int, int, str]

# A turn that speaks of a password, a login or a PIN: its made-up tokens are secrets.
SECRET_TALK = re.compile(
    r"(?<!\w)(?i:pass(?:word|wd|phrase|code)?|пасс|кодов\w+|вайфа\w*|pwd|pw|mdp|mot\s+de\s+passe"
    r"|contrase[ñn]a|cl[a@]ve\w*"
    r"|пароль|пароля|паролем|parol|логин|login|log\s+in|sign\s+in|credentials?|identifiants?"
    r"|credenciales|wi-?fi|вайфай|hint|indice|pista|подсказк|secret|секрет|token|токен"
    r"|api[\s_-]?key|ключ|clé|llave|pin|nip|пин)"
    r"(?!\w)"
)
_WORD = re.compile(r"(?<![^\s\"'«“`])[^\s\"'«»“”`(),;<>\[\]{}]{6,64}(?=$|[\s\"'»”`),;!?.])")
_DIGIT = re.compile(r"\d")
_SIGN = set("!@#$%^&*+=?~|\\/_.-")
_NOT_WORD = re.compile(
    r"^\$|@\w+\.\w|^[\w.-]+@[A-Za-z][\w.-]+$|[:=(){}'’]|--|^-|^[A-Za-z_]\w*(?:\.\w+)+$"
    r"|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{2,6}-\d+$|^\d+[-.]?[a-zа-яё]+$"
    r"|^(?:AAAA|ssh-|ecdsa-|sha\d|pk_)|^[0-9a-fA-F-]{16,}$|^[0-9a-f]{7,40}$|^[A-Za-z0-9+/]{40,}={0,2}$|://"
    r"|(?i:^www\.|\.(?:com|org|net|ru|fr|es|io|py|js|md|txt|json|pdf|jpe?g|png|zip|exe|csv|log"
    r"|html?|yml|yaml|toml|sh|conf)$)|^\d+(?:[.,:/-]\d+)*$|^v?\d+(?:\.\d+)+|^\[REDACTED"
)


_SYMBOL = set("!@#$%^&*+=?~|\\")


def _classes(value: str, signs: set[str] = _SIGN) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(c in signs for c in value[:-1])
    )


def made_up(value: str, *, strict: bool) -> bool:
    """A token someone made up: letters with digits or signs (three kinds of character;
    four when nothing around it speaks of a secret)."""
    v = value.rstrip(".,;:!?)»”")
    if len(v) < 6 or _NOT_WORD.search(v) or is_code(v) or v.lower() in STOP:
        return False
    if not any(c.isalpha() for c in v):
        return False
    if not strict and any(c.isdigit() for c in v):
        letters = sum(c.isalpha() for c in v)
        return letters >= 3 and (_classes(v) >= 3 or len(v) >= 8)
    return _classes(v, _SYMBOL) >= 4


# What a made-up token after these words is: a name, an id, a public code.
_NAMED_AS = frozenset(
    """called named nommé nommée appelé appelée llamado llamada называется ssid network réseau
    reseau red сеть swift bic iban sku order invoice ticket model modèle modelo serial ref réf
    reference référence tracking promo coupon discount descuento réduction промокод транзакции
    transaction transacción identifiant id branch tag version commit product produit producto
    товар товара article artículo item part pièce pieza batch lot""".split()
)
_WORDS = re.compile(r"\w+")


def _named_as(text: str, start: int) -> bool:
    before = _WORDS.findall(text[max(0, start - 40) : start].lower())[-4:]
    return any(w in _NAMED_AS for w in before)


# A token with a digit in it: what a made-up token needs when nothing speaks of a secret.
_DIGIT_WORD = re.compile(
    r"(?<![^\s\"'«“`])(?=[^\s\"'«»“”`(),;<>\[\]{}]{0,63}\d)[^\s\"'«»“”`(),;<>\[\]{}]{6,64}"
    r"(?=$|[\s\"'»”`),;!?.])"
)


def made_up_tokens(text: str, *, strict: bool) -> Iterator[Span]:
    for m in (_DIGIT_WORD if strict else _WORD).finditer(text):
        v = m.group(0).rstrip(".,;:!?)»”")
        if made_up(v, strict=strict) and not _named_as(text, m.start()):
            yield m.start(), m.start() + len(v), "password"


SECRET_HINTS = (
    "pass", "pwd", "pw", "mdp", "mot de passe", "contrase", "cl@ve", "clave", "пароль", "parol",
    "логин", "login", "log in", "sign in", "credential", "identifiant", "credenciales", "wifi",
    "wi-fi", "вайфа", "пасс", "кодов", "hint", "indice", "pista", "подсказк", "secret", "секрет",
    "token", "токен", "api", "ключ", "clé", "llave", "pin", "nip", "пин", "код", "code", "código",
    "codigo", "usuario", "user",
)  # fmt: skip


def secret_talk(text: str, low: str) -> Iterator[Span]:
    if _DIGIT.search(text) is None and not any(h in low for h in SECRET_HINTS):
        return
    talk = any(h in low for h in SECRET_HINTS) and SECRET_TALK.search(text) is not None
    if talk or _DIGIT.search(text) is not None:
        yield from made_up_tokens(text, strict=not talk)


# A number near a word that says it opens something.
_CODE_TALK = re.compile(
    r"(?<!\w)(?i:codes?|c[óo]digo|кодом|кода|код|digicode|pin|nip|пин|keypad|клавиатур|домофон"
    r"|шлагбаум|portail|gate|sms|смс|cajero|carte\s+bleue|bo[îi]te\s+[àa]\s+cl[ée]s"
    r"|caja\s+de\s+llaves|lockbox|key\s*box|safe|сейф|coffre|caja\s+fuerte|candado|cadenas"
    r"|замок|alarm|alarme|alarma|сигнализаци|combination|combinaison|combinaci[óo]n"
    r"|комбинаци|интерком|interphone|intercom|portero|porte|puerta|door|garage|locker"
    r"|casier|taquilla|ячейк|подтверждени|confirmation|verification|vérification"
    r"|verificaci[óo]n|one[- ]time|otp|2fa|coordenadas?)(?!\w)"
)
_LOCKED = re.compile(
    r"(?i:caja\s+fuerte|coffre|сейф\w*|safe|cadenas|candado|замок|casier|locker|taquilla)"
)
_NUMBER = re.compile(r"(?<![\w.,:/+#№-])[A-Z]?\d(?:[ -]?\d){2,9}[#*A-Z]?(?![\w:/%€$-]|[.,]\d)")
_NOT_CODE = re.compile(
    r"(?i:error|status|exit|zip|postal|post\s*code|area|country|http|response|return|line"
    r"|page|version|room|order|invoice|tracking|flight|ошибк|почтов|индекс|страниц|erreur"
    r"|commande|vol|page|error|pedido|vuelo|p[áa]gina|tel|phone|телефон|t[ée]l[ée]phone"
    r"|tel[ée]fono|подразделени|\+)\W*$"
)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# A month or a day written the ISO way ("in 2023-01", "on 2023-01-20"): a date, as
# capture itself writes resolved dates into memory texts, not a code.
_ISO_DATE = re.compile(r"^(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?$")


_CODE_HINTS = (
    "code", "códig", "codig", "код", "pin", "nip", "пин", "keypad", "клавиатур", "домофон",
    "шлагбаум", "portail", "gate", "sms", "смс", "cajero", "carte", "boîte", "boite", "caja",
    "lockbox", "box", "safe", "сейф", "coffre", "candado", "cadenas", "замок", "alarm",
    "сигнализ", "combin", "комбинац", "интерком", "phone", "intercom", "portero", "porte",
    "puerta", "door", "garage", "locker", "casier", "taquilla", "ячейк", "подтвержд",
    "confirm", "verif", "vérif", "one-time", "one time", "otp", "2fa", "coorden",
)  # fmt: skip


def code_numbers(text: str, low: str) -> Iterator[Span]:
    if not any(h in low for h in _CODE_HINTS) or not any(c.isdigit() for c in text):
        return
    words = [
        m.end()
        for m in _CODE_TALK.finditer(text)
        if not NOT_AFTER_CODE.match(text, m.end())
        and not NOT_SECRET_CODES.search(text, max(0, m.start() - 30), m.start())
    ]
    after = [m.start() for m in _LOCKED.finditer(text)]
    if not words and not after:
        return
    for m in _NUMBER.finditer(text):
        value = m.group(0)
        before = [w for w in words if 0 <= m.start() - w <= 60]
        before += [a for a in after if 0 <= a - m.end() <= 30]
        if not before or _YEAR.match(value) or _ISO_DATE.match(value):
            continue
        if UNITS.match(text, m.end()):
            continue
        if _NOT_CODE.search(text[max(0, m.start() - 20) : m.start()]):
            continue
        if sum(c.isdigit() for c in value) < 3:
            continue
        yield m.start(), m.end(), "code"


# Settings, flags, query parameters and XML elements named like a secret.
_NAMED = re.compile(
    r"(?:(?<![\w-])-{1,2}[\w-]*(?i:pass|pwd|secret|token|auth|key)[\w-]*(?:=|[ \t]+)"
    r"|(?<![\w.])[A-Z][A-Z0-9_]*(?:KEY|SECRET|TOKEN|PASS|PWD|AUTH|PASSWORD)[A-Z0-9_]*"
    r"[ \t]*[:=][ \t]*"
    r"|[?&](?i:app_?id|api_?id|api_?key|apikey|key|token|access_token|auth|secret|client_secret"
    r"|password|pwd|pass|sig)="
    r"|<(?P<tag>[\w:-]*(?i:pass|pwd|secret|token|key|pin)[\w:-]*)>"
    r"|\.login\(\s*['\"][^'\"\n]*['\"]\s*,\s*|(?i:auth)\w*\s*=\s*\(\s*['\"][^'\"\n]*['\"]\s*,\s*"
    r"|(?i:construct|connect)\w*\(\s*['\"][^'\"\n]*['\"]\s*,\s*['\"][^'\"\n]*['\"]\s*,\s*"
    r"|/rest/\d+/(?=[a-z0-9]{12,}/)"
    r"|(?<=\s)(?P<flag>-w|-[pP]|-a|-k)[ \t]*)"
    r"(?P<value>'[^'\n]{3,}'|\"[^\"\n]{3,}\"|[^\s'\"<&,;)/]{3,})"
)


_COMMANDS = re.compile(r"(?<![\w-])(?:ldap\w+|7za?|zip|unzip|rar|unrar|redis-cli|openssl)\s")


_NAMED_HINTS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "auth",
    "key",
    "appid",
    "api_id",
    "sig=",
    "login(",
    "pin>",
    "construct",
    "connect",
    "/rest/",
)


def named_values(text: str, low: str) -> Iterator[Span]:
    if not any(h in low for h in _NAMED_HINTS):
        return
    commands = [m.start() for m in _COMMANDS.finditer(text)]
    for m in _NAMED.finditer(text):
        if m["flag"] is not None and not any(c < m.start() for c in commands):
            continue
        value = bare(m["value"])
        if len(value) < 3 or is_code(value) or value.startswith(("-", "/", "$")):
            continue
        if value.isdigit() and len(value) < 6 or value.lower() in STOP:
            continue
        if m["tag"] is None and not any(c.isdigit() for c in value) and len(value) < 8:
            continue
        start, end = m.span("value")
        if m["value"][:1] in "'\"":
            start, end = start + 1, end - 1
        yield start, end, "secret"


# An identity number after its name.
_ID_NAME = re.compile(
    r"(?<!\w)(?i:passport|passeport|pasaporte|паспорт\w*|загран\w*|водительск\w*|licen[cs]e|permis"
    r"|licencia|carn[ée]|права|ni\s+number|national\s+insurance|sin|ssn|social(?:\s+security)?"
    r"|s[ée]cu(?:rit[ée]\s+sociale)?|seguridad\s+social|nss|naf|curp|rfc|rut|run|cuil|cuit"
    r"|c[ée]dula|dni|nie|nif|cni|carte\s+d['’]identit[ée]|полис|oms|омс|medicare"
    r"|mbi|tax\s+id|steuer-?id|codice\s+fiscale|id\s+number|numéro\s+fiscal)(?!\w)"
    r"(?:[\s:—–-]+(?:[^\W\d_]{1,14}\.?|n[°º]|#)){0,4}?[\s:=—–-]*"
)
_ID = re.compile(
    _ID_NAME.pattern
    + r"(?P<value>(?=[A-Za-z0-9 ./-]*\d)[A-Z0-9](?:[A-Z0-9]|[ ./-](?=[A-Z0-9])){4,22})(?![\w-])"
)


# Identity numbers published for everyone's use (Mexico's generic RFCs).
_PUBLIC_IDS = frozenset(("XAXX010101000", "XEXX010101000"))
_TWO_DIGITS = re.compile(r"\d\D*\d")


def id_after_name(text: str, low: str) -> Iterator[Span]:
    if _TWO_DIGITS.search(text) is None:
        return
    for v in _ID.finditer(text):
        value = v["value"].rstrip(" .-/")
        if value in _PUBLIC_IDS:
            continue
        digits = sum(c.isdigit() for c in value)
        if digits < 2 or digits < 5 and len(value) < 7 or _YEAR.match(value):
            continue
        yield v.start("value"), v.start("value") + len(value), "national_id"


# A passphrase said as a sentence: the rest of the clause after the link.
_PHRASE = re.compile(
    r"(?i:passphrase|pass\s+phrase|phrase\s+secr[èe]te|phrase\s+de\s+passe|frase\s+de\s+"
    r"contrase[ñn]a|frase\s+secreta|frase\s+de\s+paso|ключевая\s+фраза|кодовая\s+фраза"
    r"|секретная\s+фраза)"
    r"[^:\n.!?]{0,60}?(?:\s*[:=—–]\s*|\s+(?:is|est|es|это)\s+)"
    r"(?P<value>“[^”\n]+”|\"[^\"\n]+\"|«[^»\n]+»|[^\n—]{6,120}?)(?=\s*(?:$|\n|[—–]|\s-\s|[.!?](?:\s|$)))"
)


def passphrases(text: str, low: str) -> Iterator[Span]:
    if "phrase" not in low and "фраза" not in low and "frase" not in low:
        return
    for m in _PHRASE.finditer(text):
        words = m["value"].split()
        if not words:  # only spaces after the link: nothing said
            continue
        start, end = m.span("value")
        if m["value"][:1] in '“"«':
            start, end = start + 1, end - 1
        linked_by_verb = not re.search(r"[:=—–]\s*$", text[: m.start("value")])
        if not linked_by_verb or m["value"][:1] in '“"«' or words[0].lower() not in STOP:
            yield start, end, "password"


# A wallet's words: twelve or more short lower-case words on a line, hardly any of them
# a word of a sentence. Each word is a whole run of letters and owns the separators after
# it, so a text can be cut into words one way only (a run of letters that could be cut
# anywhere made this pattern backtrack for seconds on a line of glued words).
_WORD_RUN = re.compile(
    r"(?m)^[ \t]*(?:(?:\d{1,2}[.)]\s*)?[a-zà-ÿа-яё]{3,10}(?![a-zà-ÿа-яё])[\s,]*){12,24}$"
)
_SENTENCE_WORDS = frozenset(
    "the and for with that this you are was have not but from they will what when your "
    "les des une est pour dans que qui pas sur avec son les del los las por con para una "
    "que это что как для или".split()
)


def seed_words(text: str, low: str) -> Iterator[Span]:
    if "\n" not in text and text.count(" ") < 11:
        return
    for m in _WORD_RUN.finditer(text):
        words = re.findall(r"[a-zà-ÿа-яё]+", m.group(0))
        if sum(w in _SENTENCE_WORDS for w in words) <= 1:
            yield m.start(), m.end(), "seed_phrase"
