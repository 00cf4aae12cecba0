"""The secret words of English, Russian, French and Spanish, what links a word to its
value ("is", "c'est", "es", "это", ":"), and what a value looks like."""

from __future__ import annotations

import math
import re
from collections import Counter

from memoracle.capture.redact.formats import is_code

__all__ = ["STOP", "UNITS", "bare", "digits_code", "entropy", "generated", "is_code", "plausible"]

# A password by name: whatever follows "is"/":" is one, unless it is a word of the sentence.
PASSWORD_WORDS = (
    r"pass(?:word|wd|code|phrase)s?|pwd|пароль|пароля|паролем|паролю|mots?\s+de\s+passe|mdp"
    r"|contrase[ñn]as?|пасс|кодовое\s+слово|code\s+word|mot\s+de\s+code|palabra\s+clave"
)
# Words that name a secret only sometimes ("the key to success", "the code is clean"):
# their value must look generated (digits, signs) or be a number for a code.
CODE_WORDS = (
    r"pin|pins|codes?|passcode|combination|combo|digicode|код|кода|пин|пин-код|пинкод"
    r"|комбинаци[яию]|c[óo]digos?|combinaci[óo]n|combinaison|clave|claves"
)
KEY_WORDS = (
    r"wi-?fi|wlan|key|token|secret|login|ключ|ключа|токен|секрет|вайфай|вай-фай|wifi"
    r"|cl[ée]|jeton|secreto|llave"
)
LABEL = re.compile(
    rf"(?<!\w)(?:(?P<pw>{PASSWORD_WORDS})|(?P<code>{CODE_WORDS})|(?P<key>{KEY_WORDS}))(?!\w)",
    re.IGNORECASE,
)
LABEL_HINTS = (
    "pass", "pwd", "пароль", "mdp", "contrase", "pin", "code", "combin", "combo", "код",
    "пин", "комбинац", "código", "codigo", "clave", "wifi", "wi-fi", "wlan", "key", "token",
    "secret", "login", "ключ", "токен", "секрет", "вайфай", "вай-фай", "clé", "cle", "jeton",
    "llave",
)  # fmt: skip

# What a code word does not label: "error code 404", "code postal", "код ошибки".
NOT_SECRET_CODES = re.compile(
    r"(?:error|status|exit|zip|postal|post|area|country|promo|promotional|discount|coupon|http"
    r"|response|return|source|qr|bar|dress|colou?r|morse|tax|product|order|tracking"
    r"|reference|booking|confirmation|flight|airport|iata|language|currency|region|sort"
    r"|swift|bic|iso|dial|city|postcode|gift|voucher|referral|invite|invitation|share"
    r"|erreur|d['’]erreur|promotionnel|barres|pays|région|r[ée]gion|error|promocional"
    r"|ape|naf|siret|siren|insee|descuento|fuente|barras|pa[íi]s|[áa]rea|ошибки|почтовый|страны|региона|города"
    r"|программы|товара|заказа|скидки|промо|исходный|цвета)[\s-]+$",
    re.IGNORECASE,
)
NOT_AFTER_CODE = re.compile(
    r"\s*(?:postal|de\s+la\s+route|civil|p[ée]nal|du\s+travail|d['’]erreur|de\s+error"
    r"|review|reviews|base|source|snippet|block|change|ape|naf|подразделени\w*|ошибки|страны|promo|de\s+descuento"
    r"|de\s+promo|de\s+r[ée]duction)\b",
    re.IGNORECASE,
)

# What links a secret word (and what it is for) to its value.
GAP = (
    r"(?:\s+(?:(?:for|to|of|on|at|from|in|du|de|des|pour|del|para|от|для|к|на|у|в|во|с)\s+"
    r"|d['’]|l['’])(?:(?:the|my|our|your|his|her|their|la|le|les|el|los|las|mi|tu|su|mon|ma"
    r"|mes|ton|ta|notre|votre|nuestro|nuestra|моего|моей|мой|моя|нашего|нашей)\s+)?"
    r"[\w.@’'-]+(?:\s+[\w.@’'-]+){0,2}?){0,2}"
    r"(?:\s+(?:wi-?fi|wifi|code|pin|password|du\s+wifi|del\s+wifi|de\s+wifi))?"
)
LINK = (
    r"(?:[ \t]*(?:[:=—–]|->|=>|-(?=\s))[ \t]*"
    r"|\s+(?:is|was|are|will\s+be|is\s+now|has\s+been\s+changed\s+to|changed\s+to|set\s+to"
    r"|c['’]est|est|était|sera|reste|es|era|será|sigue\s+siendo|ahora\s+es|это|будет"
    r"|теперь|—|-)(?!\w)\s*:?\s*(?:(?:now|still|just|maintenant|toujours|ahora|теперь"
    r"|всё\s+ещё)\s+)?)"
)
# The value: a quoted string, letters spaced out ("K x 9 p"), or one token.
VALUE = (
    r"(?P<value>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|«[^»\n]{1,128}»|“[^”\n]{1,128}”|`[^`\n]{1,128}`"
    r"|(?:[^\s\"'«“`][ -]){3,40}[^\s\"'«“`.,;!?](?=\s*(?:$|[\n.,;!?)]))"
    r"|[^\s\"'«“`,;]{1,128})"
)

# Words of a sentence that are not a password ("the password is required").
STOP = frozenset(
    """
    none null nil true false undefined и а но или да нет et ou y o
    required wrong incorrect invalid correct too not set stored saved the a an same empty
    expired weak strong changed reset case missing needed ok okay fine protected hashed
    encrypted long short different also still now being been generated sent shown hidden
    secure in on at for of and or to my your his her our their this that it here there
    below above simple easy hard known unknown mandatory optional case-sensitive please
    is was will be what which who where when why how whatever something nothing same
    written taped printed saved inside under behind on in into taped stuck posted
    down up slow fast great good bad working broken out off free open closed available
    shared private public new old changing updated different personal secret safe
    valid mine yours ours his hers theirs just only really very quite so pretty
    same again elsewhere somewhere written noted listed attached included enabled
    disabled active inactive locked unlocked correct wrong strong weak long short
    неверный неправильный верный правильный не слишком такой тот же пустой изменён изменен
    сброшен нужен обязателен был в на от для ниже выше мой твой наш ваш его её их это
    тот такой какой который где как что написан записан там тут здесь сложный простой
    новый старый другой тот же уже ещё еще очень слишком
    incorrect correct invalide requis obligatoire trop pas le la les un une mon ton son vide
    expiré changé oublié dans sur ci-dessous quoi où comment quel quelle ce cet cette
    noté écrit collé sous derrière simple facile compliqué nouveau ancien différent
    toujours encore très trop aussi bien mal long court sécurisé privé personnel
    incorrecta correcta inválida invalida requerida obligatoria demasiado no el mi tu su
    vacía caducada cambiada en de para abajo la los las un una qué que cuál cual dónde
    donde cómo como escrita escrito pegada pegado debajo detrás sencilla fácil difícil
    nueva nuevo vieja viejo distinta distinto siempre todavía muy también segura seguro
    privada privado personal larga largo corta corto
    """.split()
)
# After a weak word, a value that says what a code is, not which ("4 digits long").
UNITS = re.compile(
    r"\s*(?:lines?|chars?|characters?|digits?|ms|seconds?|minutes?|hours?|days?|years?"
    r"|%|px|mb|kb|gb|bytes?|times|people|euros?|dollars?|\$|€|строк\w*|символ\w*|цифр\w*"
    r"|лет|дн\w*|lignes?|caract[èe]res?|chiffres?|ans|jours?|l[íi]neas?|caracteres?"
    r"|d[íi]gitos?|a[ñn]os|d[íi]as)\b",
    re.IGNORECASE,
)
_SIGNS = set("!@#$%^&*_+=?~|<>\\/")
_TRAIL = ".,;:!?)»”"


def bare(value: str) -> str:
    """The value without its quotes or the sentence's closing punctuation."""
    value = value.rstrip(_TRAIL) if value[:1] not in "\"'«“`" else value
    return value.strip("\"'«»“”`")


def generated(value: str) -> bool:
    """Looks made, not said: letters and digits, letters and signs, or inner capitals."""
    v = bare(value)
    if len(v) < 4 or is_code(v):
        return False
    alpha = any(c.isalpha() for c in v)
    digit = any(c.isdigit() for c in v)
    if alpha and digit:
        return True
    if alpha and any(c in _SIGNS for c in v):
        return True
    return alpha and v[1:] != v[1:].lower() and v[1:] != v[1:].upper() and len(v) >= 6


def plausible(value: str) -> bool:
    """A value after "password is" that is not a word of the sentence."""
    v = bare(value)
    if not v or is_code(v):
        return False
    if value[:1] in "\"'«“`":
        return True
    if not any(c.isalnum() for c in v):
        return False
    return v.lower() not in STOP and not v.startswith(("[REDACTED", "http"))


def digits_code(value: str) -> bool:
    """A code said as digits: 3 to 10 of them, maybe grouped ("12-34-56", "4 8 2 1")."""
    v = bare(value)
    d = sum(c.isdigit() for c in v)
    return 3 <= d <= 12 and all(c.isdigit() or c in " -.#*" for c in v) and v[0].isdigit()


def entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())
