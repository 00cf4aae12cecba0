"""A generated corpus for redaction: planted secrets of many shapes, and benign sentences
full of numbers that must come out unchanged.

Every secret is made here from a seeded random generator, so the corpus is the same on
every run and no file in the repository holds anything that looks like a real
credential (prefixes are assembled from pieces for the same reason). `secrets()` gives
each planted secret with its `needles`: the strings that must not survive anywhere
(a passphrase's every word, a PIN's digits). `benign()` gives sentences a redactor must
leave alone: versions, dates, commit hashes, order numbers, prices, product codes, and
prose that talks about passwords without giving one. Used by tests/capture/
test_redact_corpus.py, tests/test_redaction_doors.py and bench/redaction.py.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Planted", "benign", "leaks", "secrets", "shapes"]

SEED = 20261204
PER_SHAPE = 5

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"

# Words a passphrase is made of: rare enough never to appear in other text.
RARE_WORDS = (
    "quokka zephyr obsidian marmalade tundra lantern saffron gondola nebula walrus "
    "pistachio cobalt juniper origami tapioca vortex kumquat mistral pagoda fjord "
    "gazebo yodel quasar rhubarb sprocket wombat xylophone bramble cinnabar dirigible"
).split()


@dataclass(frozen=True)
class Planted:
    """One secret said in a sentence: `shape` names its form, `needles` must not survive."""

    shape: str
    text: str
    needles: tuple[str, ...]


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """`n` characters with at least two digits and two letters, as generated keys have."""
    while True:
        value = _pick(rng, alphabet, n)
        if sum(c.isdigit() for c in value) >= 2 and sum(c.isalpha() for c in value) >= 2:
            return value


def _password(rng: random.Random) -> str:
    core = rng.choice(["Blue", "kot", "Soleil", "perro", "Tiger", "moon", "Lyon", "Rosa"])
    return core + _pick(rng, DIGITS, rng.randint(2, 4)) + rng.choice(["!", "#", "", "$", "_x"])


def _digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + _pick(rng, DIGITS, n - 1)


def _luhn_digit(body: str) -> str:
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


def _iban(rng: random.Random) -> str:
    country, length = rng.choice([("DE", 18), ("FR", 23), ("ES", 20), ("GB", 18), ("NL", 14)])
    if country == "GB":
        bban = "NWBK" + _pick(rng, DIGITS, 14)
    elif country == "NL":
        bban = "ABNA" + _pick(rng, DIGITS, 10)
    else:
        bban = _pick(rng, DIGITS, length)
    moved = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in moved))
    return f"{country}{98 - number % 97:02d}{bban}"


def _spaced(value: str) -> str:
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4))


def _card(rng: random.Random) -> str:
    body = rng.choice(["4", "51", "52", "37"]) + _pick(rng, DIGITS, 13)
    body = body[:15] if not body.startswith("37") else body[:14]
    return body + _luhn_digit(body)


Shape = Callable[[random.Random], tuple[str, tuple[str, ...]]]


def _one(template: str, secret: str) -> tuple[str, tuple[str, ...]]:
    return template.format(s=secret), (secret,)


def _choose(
    rng: random.Random, templates: Iterable[str], secret: str
) -> tuple[str, tuple[str, ...]]:
    return _one(rng.choice(list(templates)), secret)


def _pem(rng: random.Random, label: str) -> tuple[str, tuple[str, ...]]:
    lines = [_pick(rng, ALNUM + "+/", 64) for _ in range(4)]
    body = "\n".join(lines)
    text = f"here is the key:\n-----BEGIN {label}-----\n{body}\n-----END {label}-----\nthanks"
    return text, tuple(lines)


def _passphrase(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    words = rng.sample(RARE_WORDS, 4)
    phrase = " ".join(words)
    template = rng.choice(
        [
            "My passphrase is {s}.",
            "The vault passphrase: {s}",
            "ключевая фраза: {s}",
            "la phrase secrète est {s}.",
            "mi frase de contraseña es {s}.",
            "passphrase = {s}",
        ]
    )
    return template.format(s=phrase), tuple(words)


SHAPES: dict[str, Shape] = {
    "openai_project": lambda r: _choose(
        r,
        ["export OPENAI_API_KEY={s}", "the key {s} works", "use {s} for the bot"],
        "sk-" + "proj-" + _mixed(r, 48, B64URL),
    ),
    "openai_legacy": lambda r: _choose(
        r, ["key: {s}", "my openai key is {s}"], "sk-" + _mixed(r, 48)
    ),
    "anthropic": lambda r: _choose(
        r, ["ANTHROPIC_API_KEY={s}", "claude key {s}"], "sk-" + "ant-api03-" + _mixed(r, 80, B64URL)
    ),
    "aws_access_key_id": lambda r: _choose(
        r, ["aws id {s}", "AWS_ACCESS_KEY_ID={s}"], "AK" + "IA" + _pick(r, UPPER + "234567", 16)
    ),
    "aws_secret": lambda r: _choose(
        r,
        ["aws_secret_access_key = {s}", "AWS_SECRET_ACCESS_KEY={s}"],
        _mixed(r, 40, ALNUM + "/+"),
    ),
    "github_classic": lambda r: _choose(
        r,
        ["my github token is {s}", "GH_TOKEN={s}", "push with {s} please"],
        "gh" + "p_" + _mixed(r, 36),
    ),
    "github_fine_grained": lambda r: _choose(
        r,
        ["token {s}", "GITHUB_TOKEN={s}"],
        "github" + "_pat_" + _mixed(r, 22) + "_" + _mixed(r, 59),
    ),
    "github_app": lambda r: _choose(
        r, ["installation {s}", "oauth {s}"], r.choice(["gh" + "s_", "gh" + "o_"]) + _mixed(r, 36)
    ),
    "gitlab": lambda r: _choose(
        r, ["gitlab {s}", "CI_TOKEN={s}"], "gl" + "pat-" + _mixed(r, 20, B64URL)
    ),
    "slack_bot": lambda r: _choose(
        r,
        ["slack bot {s}", "SLACK_BOT_TOKEN={s}"],
        "xo" + "xb-" + _digits(r, 12) + "-" + _digits(r, 13) + "-" + _mixed(r, 24),
    ),
    "slack_webhook": lambda r: _choose(
        r,
        ["post to {s} when done", "webhook: {s}"],
        "https://hooks.slack.com/services/T"
        + _pick(r, UPPER + DIGITS, 8)
        + "/B"
        + _pick(r, UPPER + DIGITS, 10)
        + "/"
        + _mixed(r, 24),
    ),
    "discord_bot": lambda r: _choose(
        r,
        ["discord bot token {s}", "DISCORD_TOKEN={s}", "the bot logs in with {s}"],
        r.choice("MN")
        + _mixed(r, 25, ALNUM)
        + "."
        + _mixed(r, 6, B64URL)
        + "."
        + _mixed(r, 38, B64URL),
    ),
    "discord_webhook": lambda r: _choose(
        r,
        ["alerts go to {s}", "hook {s}"],
        "https://discord.com/api/webhooks/" + _digits(r, 18) + "/" + _mixed(r, 68, B64URL),
    ),
    "telegram_bot": lambda r: _choose(
        r,
        ["telegram bot {s}", "TELEGRAM_TOKEN={s}", "бот: {s}"],
        _digits(r, 10) + ":" + "AA" + _mixed(r, 33, B64URL),
    ),
    "stripe_secret": lambda r: _choose(
        r, ["stripe {s}", "STRIPE_SECRET_KEY={s}"], "sk" + "_live_" + _mixed(r, 24)
    ),
    "stripe_webhook": lambda r: _choose(
        r,
        ["webhook signing secret {s}", "STRIPE_WEBHOOK_SECRET={s}"],
        "wh" + "sec_" + _mixed(r, 32),
    ),
    "google_api": lambda r: _choose(
        r, ["maps key {s}", "GOOGLE_API_KEY={s}"], "AI" + "za" + _mixed(r, 35, B64URL)
    ),
    "huggingface": lambda r: _choose(
        r, ["HF_TOKEN={s}", "hugging face {s}"], "h" + "f_" + _mixed(r, 34)
    ),
    "npm": lambda r: _choose(
        r, ["//registry.npmjs.org/:_authToken={s}", "npm {s}"], "np" + "m_" + _mixed(r, 36)
    ),
    "sendgrid": lambda r: _choose(
        r,
        ["SENDGRID_API_KEY={s}", "mail key {s}"],
        "S" + "G." + _mixed(r, 22, B64URL) + "." + _mixed(r, 43, B64URL),
    ),
    "twilio": lambda r: _choose(
        r, ["twilio api key {s}", "TWILIO_KEY={s}"], "S" + "K" + _mixed(r, 32, HEX)
    ),
    "mailgun": lambda r: _choose(
        r, ["mailgun {s}", "MAILGUN_API_KEY={s}"], "ke" + "y-" + _mixed(r, 32, HEX)
    ),
    "digitalocean": lambda r: _choose(
        r, ["do token {s}", "DIGITALOCEAN_TOKEN={s}"], "do" + "p_v1_" + _mixed(r, 64, HEX)
    ),
    "shopify": lambda r: _choose(
        r, ["shopify admin {s}", "SHOPIFY_TOKEN={s}"], "sh" + "pat_" + _mixed(r, 32, HEX)
    ),
    "pypi": lambda r: _choose(
        r,
        ["twine password {s}", "pypi token {s}"],
        "py" + "pi-AgEIcHlwaS5vcmc" + _mixed(r, 60, B64URL),
    ),
    "jwt": lambda r: _choose(
        r,
        ["cookie session={s}; path=/", "the jwt is {s}"],
        "ey"
        + "J"
        + _mixed(r, 20, B64URL)
        + ".ey"
        + "J"
        + _mixed(r, 40, B64URL)
        + "."
        + _mixed(r, 43, B64URL),
    ),
    "pem_rsa": lambda r: _pem(r, "RSA PRIVATE KEY"),
    "pem_openssh": lambda r: _pem(r, "OPENSSH PRIVATE KEY"),
    "azure_storage": lambda r: _choose(
        r,
        [
            "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
            "conn: AccountName=logs;AccountKey={s}",
        ],
        _mixed(r, 86, ALNUM + "+/") + "==",
    ),
    "azure_sas": lambda r: _choose(
        r,
        ["https://acme.blob.core.windows.net/c?sv=2022-11-02&se=2026-01-01&sig={s}"],
        _mixed(r, 43, ALNUM) + "%3D",
    ),
    "dotenv_password": lambda r: _choose(
        r,
        ["DATABASE_PASSWORD={s}", "DB_PASS={s}", "SMTP_PASSWORD='{s}'", 'REDIS_PASSWORD="{s}"'],
        _password(r),
    ),
    "dotenv_secret": lambda r: _choose(
        r,
        ["SECRET_KEY={s}", "APP_SECRET={s}", "JWT_SECRET={s}", "SESSION_SECRET: {s}"],
        _mixed(r, 24),
    ),
    "url_password": lambda r: _choose(
        r,
        [
            "postgres://app:{s}@db.internal:5432/app",
            "mysql://root:{s}@localhost/shop",
            "amqp://guest:{s}@mq:5672/",
        ],
        _password(r),
    ),
    "redis_url": lambda r: _choose(
        r,
        ["redis://:{s}@cache.internal:6379/0", "REDIS_URL=rediss://:{s}@redis:6380"],
        _password(r),
    ),
    "bearer_header": lambda r: _choose(
        r,
        ["Authorization: Bearer {s}", "curl -H 'Authorization: Bearer {s}' https://api"],
        _mixed(r, 32, B64URL),
    ),
    "basic_header": lambda r: _choose(r, ["Authorization: Basic {s}"], _mixed(r, 28, ALNUM) + "=="),
    "short_label": lambda r: _choose(
        r, ["pw: {s}", "pwd: {s}", "pass: {s}", "PW = {s}", "login admin / pw {s}"], _password(r)
    ),
    "password_en": lambda r: _choose(
        r,
        [
            "my password is {s}",
            "The wifi password is {s}.",
            "password for the router: {s}",
            "use password {s} to log in",
            "my gmail password is {s}",
        ],
        _password(r),
    ),
    "password_ru": lambda r: _choose(
        r,
        ["пароль: {s}", "мой пароль — {s}", "пароль от почты {s}", "Пароль от wifi: {s}."],
        _password(r),
    ),
    "password_fr": lambda r: _choose(
        r,
        ["mon mot de passe est {s}", "mot de passe : {s}", "le mot de passe du wifi est {s}."],
        _password(r),
    ),
    "password_es": lambda r: _choose(
        r,
        ["mi contraseña es {s}", "contraseña: {s}", "la contraseña del wifi es {s}."],
        _password(r),
    ),
    "passphrase": _passphrase,
    "door_code": lambda r: _choose(
        r,
        [
            "The door code is {s}.",
            "door code: {s}",
            "код от двери {s}",
            "код домофона — {s}",
            "le code de la porte est {s}",
            "digicode {s}",
            "el código de la puerta es {s}",
            "the gate code is {s}",
            "building entry code {s}",
        ],
        _digits(r, r.choice([4, 5, 6])),
    ),
    "alarm_code": lambda r: _choose(
        r,
        [
            "the alarm code is {s}",
            "alarm code: {s}",
            "код сигнализации {s}",
            "le code de l'alarme est {s}",
            "el código de la alarma es {s}",
        ],
        _digits(r, r.choice([4, 6])),
    ),
    "pin": lambda r: _choose(
        r,
        [
            "my bank PIN is {s}",
            "PIN: {s}",
            "card pin {s}",
            "мой пин-код {s}",
            "PIN-код карты: {s}",
            "mon code PIN est {s}",
            "mi PIN es {s}",
            "el pin de la tarjeta es {s}",
            "the SIM PIN is {s}",
        ],
        _digits(r, r.choice([4, 4, 6])),
    ),
    "iban": lambda r: _choose(
        r, ["my IBAN is {s}", "IBAN: {s}", "pay to {s} please", "virement sur {s}"], _iban(r)
    ),
    "iban_spaced": lambda r: (lambda v: (f"IBAN {_spaced(v)}", (_spaced(v),)))(_iban(r)),
    "card_number": lambda r: (
        lambda v: r.choice(
            [
                (f"card {v} exp 09/28", (v,)),
                (f"my visa is {_spaced(v)}", (_spaced(v),)),
            ]
        )
    )(_card(r)),
    "connection_string": lambda r: _choose(
        r,
        ["Server=db;Database=shop;User Id=sa;Password={s};", "Host=pg;Username=app;Password={s}"],
        _password(r),
    ),
    "cli_flag": lambda r: _choose(
        r,
        [
            "mysql -u root -p{s} shop",
            "psql --password={s}",
            "login --password {s}",
            "docker login -u bot -p {s}",
        ],
        _password(r),
    ),
    "shell_export": lambda r: _choose(
        r,
        ['export API_TOKEN="{s}"', "export SERVICE_API_KEY={s}", "set ACCESS_TOKEN={s}"],
        _mixed(r, 28),
    ),
    "yaml_secret": lambda r: _choose(
        r, ["client_secret: {s}", '  api_key: "{s}"', '"private_token": "{s}"'], _mixed(r, 30)
    ),
}


def shapes() -> tuple[str, ...]:
    return tuple(SHAPES)


def secrets(per_shape: int = PER_SHAPE, seed: int = SEED) -> list[Planted]:
    """`per_shape` secrets of every shape, the same on every run."""
    rng = random.Random(seed)
    planted: list[Planted] = []
    for name, make in SHAPES.items():
        for _ in range(per_shape):
            text, needles = make(rng)
            planted.append(Planted(name, text, needles))
    return planted


def leaks(text: str, needles: Iterable[str]) -> list[str]:
    """The needles found in `text`, each as a whole token (a PIN's digits inside a longer
    number or a hash are not that PIN)."""
    found = []
    for needle in needles:
        pattern = rf"(?<![A-Za-z0-9]){re.escape(needle)}(?![A-Za-z0-9])"
        if re.search(pattern, text):
            found.append(needle)
    return found


# --- benign sentences ----------------------------------------------------------------

_BENIGN_TEMPLATES = (
    "Version {ver} fixed the crash we saw on {date}.",
    "Upgraded numpy to {ver} and pytest to {ver2}.",
    "Commit {sha} fixed the flaky test; {sha7} reverted it.",
    "The release tag v{ver} points at {sha7}.",
    "Order #{n6} ships on {date} for ${price}.",
    "The invoice INV-{year}-{n5} totals €{price}, due {date}.",
    "Ticket JIRA-{n4} is blocked by PROJ-{n3}.",
    "Call support at +1 555 {n3} {n4} between 9 and 5.",
    "My number is 8 800 555 {n2} {n2b}.",
    "The product code is {code}, batch {n6}.",
    "Part number {pn} costs {price} USD.",
    "The EAN barcode on the box reads {ean}.",
    "Flight LH{n4} leaves at {time} from gate B{n2}.",
    "Meeting at {time} in room {n3}; dial-in 123 {n3} {n4}.",
    "Request id {uuid} failed with status 503.",
    "The container {sha12} restarted {n2} times since {date}.",
    "Timestamp {epoch} is when the job started.",
    "We sold {n5} units in Q{q} {year}, up {pct}% from last year.",
    "The server has {n3} GB RAM and {n2} cores at {ghz} GHz.",
    "Postgres listens on port {port}; Redis on {port2}.",
    "Build #{n5} took {n3} seconds on runner {n2}.",
    "Tracking number {track} is out for delivery.",
    "The package weighs {kg} kg and costs {price} euros.",
    "Coordinates {lat}, {lon} are the new office.",
    "Docker image sha256:{sha64} is the one we deployed.",
    "Set max_tokens to {n4} and temperature to 0.{n1}.",
    "The password policy requires {n2} characters and a digit.",
    "I forgot my password again and reset it on {date}.",
    "Reset your password from the login page before {date}.",
    "The password manager holds {n3} entries now.",
    "Пароль должен содержать не меньше {n2} символов.",
    "Я сменил пароль {date}, теперь всё работает.",
    "Le mot de passe doit contenir {n2} caractères.",
    "J'ai oublié mon mot de passe hier.",
    "La contraseña debe tener {n2} caracteres.",
    "Olvidé mi contraseña otra vez.",
    "The door code changes every {n2} days, ask the front desk.",
    "The PIN pad on floor {n1} is broken.",
    "The API key rotation is scheduled for {date}.",
    "Tokens used: {n5} prompt, {n4} completion.",
    "The token limit is {n6} per minute.",
    "Secret Santa budget is {price} dollars this year.",
    "Bearer bonds were popular in {year}.",
    "Lot {n4}-{n3} of the auction sold for £{price}.",
    "Заказ №{n6} придёт {date}, сумма {price} ₽.",
    "Версия {ver} вышла {date}, коммит {sha7}.",
    "La version {ver} est sortie le {date}, commande n°{n6}.",
    "La versión {ver} salió el {date}, pedido {n6}.",
    "Room {n3}, building {n1}, floor {n2}.",
    "ISBN 978-{n1}-{n3}-{n5}-{n1b} is the book I meant.",
    "The serial number is SN{n6}{n4}.",
    "My order id was {n4}-{n4b}-{n4c}-{n4d}.",
    "Model RTX {n4} Ti costs {price}.",
    "Our VAT number is DE{n9}.",
    "The git branch feature/{n4}-login was merged in {sha7}.",
    "Python {ver} on Ubuntu {year2}.04, kernel {ver2}.",
    "Run `pip install memoracle=={ver}` then restart.",
    "Hash md5 {sha32} matches the download.",
    "The wifi network is called Home-{n4}.",
    "See https://example.com/issues/{n4}?page={n2}&sort=asc for details.",
    "https://github.com/acme/app/commit/{sha} is the fix.",
    "Use user@{n4}.example.com for the test account.",
    "Temperature hit {n2}.{n1} °C on {date}.",
    "Between {n4} and {n4b} people attended.",
    "Key takeaways: ship v{ver} by {date}.",
    "My key is under the mat, next to pot {n2}.",
)


def _benign_values(r: random.Random) -> dict[str, str]:
    d = lambda n: _digits(r, n)  # noqa: E731
    return {
        "ver": f"{r.randint(0, 12)}.{r.randint(0, 40)}.{r.randint(0, 30)}",
        "ver2": f"{r.randint(1, 9)}.{r.randint(0, 20)}",
        "date": r.choice(
            [
                f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
                f"{r.randint(1, 28)}/{r.randint(1, 12)}/2025",
                f"March {r.randint(1, 28)}",
            ]
        ),
        "sha": _pick(r, HEX, 40),
        "sha7": _pick(r, HEX, 7),
        "sha12": _pick(r, HEX, 12),
        "sha32": _pick(r, HEX, 32),
        "sha64": _pick(r, HEX, 64),
        "n1": d(1),
        "n1b": d(1),
        "n2": d(2),
        "n2b": d(2),
        "n3": d(3),
        "n4": d(4),
        "n4b": d(4),
        "n4c": d(4),
        "n4d": d(4),
        "n5": d(5),
        "n6": d(6),
        "n9": d(9),
        "price": f"{r.randint(1, 9999)}.{r.randint(0, 99):02d}",
        "year": str(r.randint(1990, 2026)),
        "year2": str(r.choice([20, 22, 24])),
        "code": f"{_pick(r, UPPER, 3)}-{d(4)}-{d(3)}",
        "pn": f"{d(3)}-{d(3)}-{d(4)}",
        "ean": d(13),
        "time": f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}",
        "uuid": "-".join(_pick(r, HEX, n) for n in (8, 4, 4, 4, 12)),
        "epoch": str(r.randint(1_600_000_000, 1_800_000_000) * r.choice([1, 1000])),
        "q": str(r.randint(1, 4)),
        "pct": str(r.randint(1, 99)),
        "ghz": f"{r.randint(1, 5)}.{r.randint(0, 9)}",
        "port": str(r.randint(1024, 65535)),
        "port2": str(r.randint(1024, 65535)),
        "track": "1Z" + _pick(r, UPPER + DIGITS, 16),
        "kg": f"{r.randint(0, 99)}.{r.randint(0, 9)}",
        "lat": f"{r.uniform(-80, 80):.5f}",
        "lon": f"{r.uniform(-170, 170):.5f}",
    }


def benign(count: int = 560, seed: int = SEED) -> list[str]:
    """`count` sentences with nothing secret in them, every template used in turn."""
    rng = random.Random(seed + 1)
    out = []
    for i in range(count):
        template = _BENIGN_TEMPLATES[i % len(_BENIGN_TEMPLATES)]
        out.append(template.format(**_benign_values(rng)))
    return out
