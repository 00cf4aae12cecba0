"""redact: every secret format is replaced, its near misses are not, and the text around
a secret survives. Test secrets are assembled from pieces so that no file in the repo
looks like a leaked credential to a secret scanner."""

from __future__ import annotations

import pytest

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
    ("card_number", "card 4111 1111 1111 1111 exp 12/27", "card [REDACTED:card_number] exp 12/27"),
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
        "pw: x. password: [REDACTED:password], key [REDACTED:openai_key], "
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
    assert {kind for kind, _, _ in SECRETS} == set(KINDS)


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
