"""redact by kind: secret words of four languages in prose of any shape, codes and PINs,
CLI and environment shapes, the second half of a pair, identity numbers with their check
digits, 2FA seeds, backup codes and seed phrases, base64 that decodes to credentials,
high-entropy strings near a secret word, a secret over two turns; and the look-alikes
they must leave alone. Values are assembled from pieces or made up."""

from __future__ import annotations

import base64

import pytest
from test_redact import SECRETS

from memoracle.capture.redact import KINDS, redact

NEW_KINDS = [
    ("card_expiry", "4111 1111 1111 1111 exp 12/27", "12/27"),
    ("card_cvv", "card 4111111111111111 cvv 737", "737"),
    ("national_id", "SSN 123-45-6789", "6789"),
    ("national_id", "passport number 4510 123456", "123456"),
    ("totp_seed", "the 2FA secret JBSW Y3DP EHPK 3PXP for github", "EHPK"),
    ("backup_code", "backup codes: 7h3k-29dq 8k2m-55xz", "7h3k-29dq"),
    (
        "seed_phrase",
        "seed phrase: quokka zephyr walrus tundra lantern saffron gondola nebula pagoda fjord"
        " gazebo yodel",
        "quokka zephyr",
    ),
    ("encoded_secret", "header " + base64.b64encode(b"admin:Pa55word!").decode(), "YWRtaW4"),
    ("token", "here " + "lin" + "_api_" + "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC9aB3dE5gH", "mN1pQ2"),
]


@pytest.mark.parametrize(("kind", "text", "needle"), NEW_KINDS)
def test_each_new_kind(kind: str, text: str, needle: str) -> None:
    found = redact(text)
    assert needle not in found.text
    assert kind in found.kinds


def test_every_kind_has_an_example() -> None:
    covered = {k for k, _, _ in SECRETS} | {k for k, _, _ in NEW_KINDS} | {"secret", "code"}
    assert set(KINDS) <= covered


# (text, needle): said in words, every language.
PROSE = [
    ("the wifi is Tournesol88 by the way", "Tournesol88"),
    ("wifi password: Kx9-pelican-44", "Kx9-pelican-44"),
    ("use Hunter42x to log in", "Hunter42x"),
    ("логин admin пароль qwerty12", "qwerty12"),
    ("пароль от вайфая — Lisa2019!", "Lisa2019"),
    ("le mdp du wifi c'est Soleil-2024", "Soleil-2024"),
    ("la clave del wifi es Perro_77", "Perro_77"),
    ("la clave es Gato2020", "Gato2020"),
    ("my password is sunflower", "sunflower"),
    ("My PIN is 4821", "4821"),
    ("the alarm code is 2570", "2570"),
    ("the combination is 12-34-56", "12-34-56"),
    ("код от сейфа 9931", "9931"),
    ("le code de l'alarme est 2570", "2570"),
    ("la combinación del candado es 3141", "3141"),
    ("my password is K x 9 p e l", "x 9 p"),
    ("sshpass -p 'Zq7marmot' ssh deploy@host", "Zq7marmot"),
    ("PGPASSWORD=Zq7marmot psql -h db", "Zq7marmot"),
    ("WIFI:T:WPA;S:home;P:MyPass99;;", "MyPass99"),
    ("curl -u admin:Zq7marmot https://api.example.com", "Zq7marmot"),
    ('{"api_key": "x", "password": "Zq7marmot"}', "Zq7marmot"),
    ("username: bob\nZq7!marmot", "Zq7!marmot"),
    ("is Pl4net!Moss strong enough for my bank?", "Pl4net!Moss"),
    ("I changed my mail password to Ci7der$Hill last night", "Ci7der$Hill"),
    ("la pista es 'gato + año', o sea Minino2011", "Minino2011"),
    ("gate code at the cottage is 5512# then push", "5512"),
    ("код подтверждения из банка 604213, скажи мне", "604213"),
    ("dejé 0472 en la caja fuerte del hotel", "0472"),
    ("le code reçu par SMS : 381992", "381992"),
    ("account recovery code QWERT-Z1X2C-V3B4N-M5L6K", "M5L6K"),
    ("ACME_APIKEY_PRIVATE=" + "c0ffee" * 5 + "42", "c0ffee"),
    ("GET /v2/weather?q=oslo&appid=" + "9a8b7c6d5e4f" * 2 + " HTTP/1.1", "9a8b7c6d5e4f"),
    ("<server><password>Wr3n-Tide-0</password></server>", "Wr3n-Tide-0"),
    ("numéro de passeport 19XK27731 pour le visa", "19XK27731"),
    ("my social without dashes is 512449871", "512449871"),
    ("phrase secrète du coffre : le hibou boit du thé vert — tout en minuscules", "hibou boit"),
]


@pytest.mark.parametrize(("text", "needle"), PROSE)
def test_said_in_words(text: str, needle: str) -> None:
    assert needle not in redact(text).text


PAIRS = [
    ("AKIA" + "IOSFODNN7EXAMPLE then " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "bPxRfi"),
    ("AC" + "0123456789abcdef0123456789abcdef auth 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d"),
    ("card 4111 1111 1111 1111, 09/28, 123", "09/28"),
    ("card 4111 1111 1111 1111, 09/28, 123", ", 123"),
]


@pytest.mark.parametrize(("text", "needle"), PAIRS)
def test_the_second_half_of_a_pair(text: str, needle: str) -> None:
    assert needle not in redact(text).text


# Identity numbers: valid check digits are taken, a wrong one is left.
IDS = [
    ("mon numéro de sécu 1 85 05 78 006 084 91", "006 084"),
    ("DNI 12345678Z", "12345678Z"),
    ("NIE X1234567L", "X1234567L"),
    ("СНИЛС 112-233-445 95", "445 95"),
    ("ИНН 7707083893", "7707083893"),
]
NOT_IDS = [
    "ref 12345678A is a wrong letter",
    "ref 112-233-445 96",
    "ИНН 7707083894",
    "order 1 85 05 78 006 084 37",
]


@pytest.mark.parametrize(("text", "needle"), IDS)
def test_identity_numbers(text: str, needle: str) -> None:
    assert needle not in redact(text).text


@pytest.mark.parametrize("text", NOT_IDS)
def test_wrong_check_digits_are_kept(text: str) -> None:
    assert redact(text).text == text


# (previous turn as stored, this turn, needle): a secret over two turns.
TWO_TURNS = [
    ("what's the wifi password?", "Tournesol88", "Tournesol88"),
    ("my password is", "sunflower", "sunflower"),
    ("c'est quoi le code de la porte ?", "c'est 4821", "4821"),
    (
        "key:\n[REDACTED:private_key]",
        "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC\n-----END PRIVATE KEY-----",
        "aB3dE5",
    ),
    ("the token is [REDACTED:openai_key]", "9xY0zC4tU6vW8", "9xY0zC"),
    ("my backup codes:", "7h3k-29dq 8k2m-55xz", "8k2m"),
]


@pytest.mark.parametrize(("previous", "text", "needle"), TWO_TURNS)
def test_a_secret_over_two_turns(previous: str, text: str, needle: str) -> None:
    assert needle not in redact(text, previous=previous).text


@pytest.mark.parametrize(("previous", "text", "needle"), TWO_TURNS[:3])
def test_alone_the_answer_says_nothing_secret(previous: str, text: str, needle: str) -> None:
    assert needle in redact(text).text


def test_an_ordinary_answer_after_a_label_is_kept() -> None:
    text = "I don't remember it, I'll ask Anna tomorrow."
    assert redact(text, previous="what's the wifi password?").text == text


BENIGN = [
    "password = getpass.getpass()",
    "pwd = input('Password: ')",
    "la clave es la paciencia",
    "La contraseña está guardada en el cajón",
    "La clave está en la comunicación",
    "Le mot de passe est dans le tiroir",
    "le code est propre et testé",
    "the wifi is down again",
    "the key to success is patience",
    "the error code is 404",
    "HTTP status code 503 again",
    "mi código postal es 28013",
    "le code postal est 75011",
    "the code is 200 lines long",
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the token refresh",
    "call me at 555-123-4567",
    "the meeting is at 10:30 on 2026-05-14, room 4821",
    "PIN 13 on the Raspberry Pi header",
    "I changed my password yesterday and it works now",
    "Пароль я поменял вчера, всё работает",
    "what is your wifi password?",
    "set the oven to 200C, 35 min, then rest",
    "the log shows password=******** so it is masked",
    "the README says API_KEY=your_api_key_here in .env",
    "sshpass -e ssh deploy@bastion reads $SSHPASS",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk3Zt9q2Lr8vX1 kira@laptop",
    'integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"',
    "I noticed a spiderman pin on your bag. Is Spider-Man your favourite?",
    "exciting things are happening--I'm starting a new job",
    "The product code is QXT-5521-904, batch 118273.",
    "Mon code postal est 69003, c'est Lyon.",
    "code APE 6201Z, programmation",
    "in test mode 4242 4242 4242 4242 works",
    "my locker is #214 next to the fountain",
    "the code in commit 9fceb02d0ae5 broke the settings page for user Anna2",
    "the api returns iPhone15Pro as the model for that user",
]


@pytest.mark.parametrize("text", BENIGN)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact(text).text == text
