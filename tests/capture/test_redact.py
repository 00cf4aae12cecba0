"""redact: every secret format is replaced, its near misses are not, and the text around
a secret survives. Test secrets are assembled from pieces so that no file in the repo
looks like a leaked credential to a secret scanner."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoracle.capture.redact import KINDS, Redaction, redact

ALNUM = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC"  # 32 mixed characters


def _chars(n: int) -> str:
    return (ALNUM * (n // len(ALNUM) + 1))[:n]


OPENAI = "sk-" + _chars(48)
OPENAI_PROJECT = "sk-" + "proj-" + _chars(40) + "_" + _chars(20)
ANTHROPIC = "sk-" + "ant-api03-" + _chars(40) + "-" + _chars(20)
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp" + "_" + _chars(36)
GITHUB_PAT = "github" + "_pat_" + _chars(22) + "_" + _chars(59)
GITLAB = "glpat" + "-" + _chars(20)
SLACK = "xox" + "b-123456789012-1234567890123-" + _chars(24)
STRIPE = "sk" + "_live_" + _chars(24)
GOOGLE = "AI" + "za" + _chars(35)
HUGGING_FACE = "hf" + "_" + _chars(34)
TELEGRAM = "123456789" + ":" + "AA" + _chars(33)
SENDGRID = "SG" + "." + _chars(22) + "." + _chars(43)
NPM = "npm" + "_" + _chars(36)
JWT = "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + "." + _chars(43)
PEM_BODY = "\n".join([_chars(64), _chars(64), _chars(20)])


def _pem(label: str) -> str:
    return f"-----BEGIN {label}-----\n{PEM_BODY}\n-----END {label}-----"


# (kind, text, redacted text)
SECRETS = [
    ("openai_key", f"my key is {OPENAI} ok", "my key is [REDACTED:openai_key] ok"),
    ("openai_key", f"OPENAI_API_KEY={OPENAI_PROJECT}", "OPENAI_API_KEY=[REDACTED:openai_key]"),
    ("anthropic_key", f"use {ANTHROPIC}.", "use [REDACTED:anthropic_key]."),
    ("aws_access_key_id", f"id {AWS_ID} here", "id [REDACTED:aws_access_key_id] here"),
    ("aws_access_key_id", "id ASIA" + "Y34FZKBOKMUTVV7A", "id [REDACTED:aws_access_key_id]"),
    (
        "aws_secret_key",
        f"aws_secret_access_key = {AWS_SECRET}",
        "aws_secret_access_key = [REDACTED:aws_secret_key]",
    ),
    ("github_token", f"token {GITHUB}", "token [REDACTED:github_token]"),
    ("github_token", "gho" + "_" + _chars(36), "[REDACTED:github_token]"),
    ("github_token", "ghs" + "_" + _chars(36), "[REDACTED:github_token]"),
    ("github_token", "ghu" + "_" + _chars(36), "[REDACTED:github_token]"),
    ("github_token", f"pat: {GITHUB_PAT}", "pat: [REDACTED:github_token]"),
    ("gitlab_token", f"{GITLAB} for CI", "[REDACTED:gitlab_token] for CI"),
    ("slack_token", f"slack {SLACK}", "slack [REDACTED:slack_token]"),
    ("stripe_key", f"stripe {STRIPE}", "stripe [REDACTED:stripe_key]"),
    ("stripe_key", "rk" + "_live_" + _chars(24), "[REDACTED:stripe_key]"),
    ("stripe_key", "sk" + "_test_" + _chars(24), "[REDACTED:stripe_key]"),
    ("google_api_key", f"maps key {GOOGLE}", "maps key [REDACTED:google_api_key]"),
    ("huggingface_token", f"HF_TOKEN={HUGGING_FACE}", "HF_TOKEN=[REDACTED:huggingface_token]"),
    ("telegram_bot_token", f"bot {TELEGRAM} here", "bot [REDACTED:telegram_bot_token] here"),
    ("sendgrid_key", f"mail {SENDGRID}", "mail [REDACTED:sendgrid_key]"),
    ("npm_token", f"//registry/:_authToken={NPM}", "//registry/:_authToken=[REDACTED:npm_token]"),
    ("jwt", f"cookie={JWT}; path=/", "cookie=[REDACTED:jwt]; path=/"),
    (
        "auth_header",
        "Authorization: Bearer " + _chars(30),
        "Authorization: Bearer [REDACTED:auth_header]",
    ),
    (
        "auth_header",
        "authorization: Basic " + "dXNlcjpwYXNzd29yZA==",
        "authorization: Basic [REDACTED:auth_header]",
    ),
    ("bearer_token", "send Bearer " + _chars(30), "send Bearer [REDACTED:bearer_token]"),
    (
        "url_password",
        "postgres://app:s3cr3t@db.example.com:5432/app",
        "postgres://app:[REDACTED:url_password]@db.example.com:5432/app",
    ),
    (
        "private_key",
        f"key:\n{_pem('RSA PRIVATE KEY')}\nthanks",
        "key:\n[REDACTED:private_key]\nthanks",
    ),
    ("private_key", f"{_pem('OPENSSH PRIVATE KEY')} done", "[REDACTED:private_key] done"),
    ("private_key", f"{_pem('PRIVATE KEY')}", "[REDACTED:private_key]"),
    ("secret", "api_key = " + _chars(32), "api_key = [REDACTED:secret]"),
    ("password", "my password is hunter2.", "my password is [REDACTED:password]."),
    (
        "password",
        "the password for gmail is 'tr0ub4dor'",
        "the password for gmail is [REDACTED:password]",
    ),
    ("password", "password: swordfish", "password: [REDACTED:password]"),
    ("password", "Server=db;Uid=sa;Pwd=Secret1;", "Server=db;Uid=sa;Pwd=[REDACTED:password];"),
    ("password", "passwd: letmein", "passwd: [REDACTED:password]"),
    ("password", "the passcode is 4321", "the passcode is [REDACTED:password]"),
    ("password", "пароль: qwerty123", "пароль: [REDACTED:password]"),
    ("password", "мой пароль — кот2020, не говори", "мой пароль — [REDACTED:password], не говори"),
    ("password", "mot de passe : soleil", "mot de passe : [REDACTED:password]"),
    ("password", "le mot de passe est Azerty1", "le mot de passe est [REDACTED:password]"),
    ("password", "contraseña: perro99", "contraseña: [REDACTED:password]"),
    ("password", "la contraseña es gato", "la contraseña es [REDACTED:password]"),
    ("twilio_key", "twilio " + "SK" + "0123456789abcdef" * 2, "twilio [REDACTED:twilio_key]"),
    ("mailgun_key", "key" + "-" + "0a1b2c3d4e5f6a7b" * 2, "[REDACTED:mailgun_key]"),
    ("digitalocean_token", "do" + "p_v1_" + "0a1b2c3d" * 8, "[REDACTED:digitalocean_token]"),
    ("shopify_token", "shp" + "at_" + "0a1b2c3d" * 4 + " ok", "[REDACTED:shopify_token] ok"),
    ("pypi_token", "pypi" + "-AgEIcHlwaS5vcmc" + _chars(50), "[REDACTED:pypi_token]"),
    (
        "discord_token",
        "bot " + "N" + _chars(25) + "." + _chars(6) + "." + _chars(38),
        "bot [REDACTED:discord_token]",
    ),
    (
        "webhook_url",
        "post to https://hooks.slack.com/services/" + "T0AB12CD/B0XY34ZW/" + _chars(24),
        "post to https://hooks.slack.com/services/[REDACTED:webhook_url]",
    ),
    (
        "webhook_url",
        "https://discord.com/api/webhooks/" + "123456789012345678/" + _chars(60),
        "https://discord.com/api/webhooks/[REDACTED:webhook_url]",
    ),
    (
        "azure_key",
        "AccountName=acme;AccountKey=" + _chars(86) + "==;EndpointSuffix=core.windows.net",
        "AccountName=acme;AccountKey=[REDACTED:azure_key];EndpointSuffix=core.windows.net",
    ),
    (
        "url_signature",
        "https://acme.blob.core.windows.net/c?sv=2022-11-02&sig=" + _chars(43) + "%3D",
        "https://acme.blob.core.windows.net/c?sv=2022-11-02&sig=[REDACTED:url_signature]",
    ),
    ("password", "DATABASE_PASSWORD=" + "Tiger13", "DATABASE_PASSWORD=[REDACTED:password]"),
    ("password", "SMTP_PASSWORD='Lyon42#'", "SMTP_PASSWORD=[REDACTED:password]"),
    ("password", "pw: Blue619#", "pw: [REDACTED:password]"),
    (
        "url_password",
        "redis://:" + "Soleil892@cache:6379",
        "redis://:[REDACTED:url_password]@cache:6379",
    ),
    ("password", "docker login -u bot -p Blue52$", "docker login -u bot -p [REDACTED:password]"),
    ("password", "login --password Soleil41$", "login --password [REDACTED:password]"),
    ("password", "пароль от почты perro62", "пароль от почты [REDACTED:password]"),
    (
        "password",
        "My passphrase is quokka zephyr obsidian walrus.",
        "My passphrase is [REDACTED:password].",
    ),
    ("secret", "APP_SECRET=" + _chars(24), "APP_SECRET=[REDACTED:secret]"),
    ("code", "my bank PIN is 8351", "my bank PIN is [REDACTED:code]"),
    ("code", "The door code is 4821.", "The door code is [REDACTED:code]."),
    ("code", "код домофона — 77204", "код домофона — [REDACTED:code]"),
    ("code", "le code de l'alarme est 2570", "le code de l'alarme est [REDACTED:code]"),
    ("code", "el pin de la tarjeta es 1234", "el pin de la tarjeta es [REDACTED:code]"),
    ("iban", "IBAN: " + "DE89370400440532013000", "IBAN: [REDACTED:iban]"),
    ("iban", "IBAN " + "DE89 3704 0044 0532 0130 00", "IBAN [REDACTED:iban]"),
    ("card_number", "card 4111 1111 1111 1111 for rent", "card [REDACTED:card_number] for rent"),
    ("card_number", "5500-0000-0000-0004", "[REDACTED:card_number]"),
    ("card_number", "amex 378282246310005.", "amex [REDACTED:card_number]."),
]


@pytest.mark.parametrize(("kind", "text", "expected"), SECRETS)
def test_secret_is_replaced(kind: str, text: str, expected: str) -> None:
    assert redact(text) == Redaction(expected, (kind,))


# (format it nearly looks like, text): nothing to redact.
NEAR_MISSES = [
    ("openai_key", "scikit-learn is sk-learn for short"),
    ("openai_key", "sk-this-is-just-a-long-hyphenated-phrase"),
    ("openai_key", "the task-" + _chars(30) + " id"),
    ("anthropic_key", "sk-ant-short"),
    ("aws_access_key_id", "AKIA1234 is too short"),
    ("aws_secret_key", "aws_secret_access_key = <your secret here>"),
    ("github_token", "ghp_short and gho_away"),
    ("gitlab_token", "glpat-short"),
    ("slack_token", "xoxo, hugs"),
    ("stripe_key", "sk_live_short"),
    ("google_api_key", "AIza is a prefix"),
    ("huggingface_token", "call hf_hub_download first"),
    ("telegram_bot_token", "12345678:short"),
    ("sendgrid_key", "SG.short.token"),
    ("npm_token", "npm_config_cache is a variable"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9 alone is a header"),
    ("auth_header", "the Authorization: header is required"),
    ("bearer_token", "bearer bonds were popular in the old days"),
    ("url_password", "https://user@host.example.com and http://localhost:8080/path"),
    ("private_key", _pem("PUBLIC KEY")),
    ("secret", "token: none, api_key = os.environ['KEY']"),
    ("password", "password is required"),
    ("password", "I forgot my password again"),
    ("password", "пароль не подходит"),
    ("password", "le mot de passe est incorrect"),
    ("password", "la contraseña es incorrecta"),
    ("password", "boarding pass: gate 12"),
    ("password", "docker run -p 8080:80 app and git log -p abc123f"),
    ("password", "Set DB_PASSWORD=${DB_PASSWORD} in CI; MAX_TOKENS=4096"),
    ("password", "the passphrase is required"),
    ("code", "connect the LED to pin 13; the PIN pad on floor 3 is broken"),
    ("code", "the door code changes every 14 days"),
    ("code", "I lost my job at Door Dash in 2023-01 and started at the garage on 2023-02-20"),
    ("iban", "VAT DE123456789 and DE89370400440532013001 (bad check digits)"),
    ("card_number", "order 4111 1111 1111 1112"),
    ("card_number", "call +1 555 123 4567 or 8 800 555 35 35"),
    ("card_number", "timestamp 1683554160000"),
]


@pytest.mark.parametrize(("kind", "text"), NEAR_MISSES)
def test_near_miss_is_kept(kind: str, text: str) -> None:
    assert redact(text) == Redaction(text, ())


def test_kinds_in_text_order_once_each() -> None:
    text = f"pw: x. password: hunter2, key {OPENAI}, again {OPENAI}"
    found = redact(text)
    assert found.kinds == ("password", "openai_key")
    assert found.text == (
        "pw: [REDACTED:password]. password: [REDACTED:password], key [REDACTED:openai_key], "
        "again [REDACTED:openai_key]"
    )


def test_specific_format_wins_over_generic_label() -> None:
    found = redact(f"Authorization: Bearer {OPENAI}")
    assert found == Redaction("Authorization: Bearer [REDACTED:openai_key]", ("openai_key",))


def test_ordinary_text_is_untouched() -> None:
    text = "Let's refactor the parser next week; the 2023 numbers look fine (42 of 50)."
    assert redact(text) == Redaction(text, ())


def test_covers_at_least_fifteen_kinds() -> None:
    assert len(KINDS) >= 15
    assert {kind for kind, _, _ in SECRETS} <= set(KINDS)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("the wifi password is Tr0ub4dor&3", "the wifi password is [REDACTED:password]"),
        ("My password is: correct horse battery staple", "My password is: [REDACTED:password]"),
        (
            "password: hunter2 and the user is bob",
            "password: [REDACTED:password] and the user is bob",
        ),
        ("Пароль: кот в сапогах.", "Пароль: [REDACTED:password]."),
        ("mot de passe : Soleil42, merci", "mot de passe : [REDACTED:password], merci"),
    ],
)
def test_password_values_with_symbols_and_passphrases(text: str, kept: str) -> None:
    assert redact(text).text == kept


# Pieces the finders key on, with the spaces, line breaks and quotes around values that
# once made one of them read an empty value ("passphrase is" and only spaces after it).
_PIECES = st.sampled_from(
    [
        "passphrase is", "frase secreta es", "ключевая фраза это", "password", "mdp",
        "contraseña", "пароль", "PIN", "code", "token", "wifi", "=", ":", "—", " ", "   ",
        "\n", "\n\n", '"', "«", "“", "-----BEGIN RSA PRIVATE KEY-----", "otpauth://",
        "AKIA", "sk-", "4111 1111 1111 1111", "cvv", "12345678", "est", "es",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=14), st.booleans())
def test_redact_never_raises_whatever_the_text(pieces: list[str], with_previous: bool) -> None:
    text = "".join(pieces)
    out = redact(text, previous=text[::-1] if with_previous else None)
    assert isinstance(out.text, str)
