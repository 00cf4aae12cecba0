"""Which names in a folder say "secrets here": version-control folders, dot-env files,
key stores and key files, folders of keys and secrets, and files whose names say they
hold credentials, in English, Russian, French and Spanish (docs/ingest.md#secrets).

Pure: a name in, the reason it is left out (or None) back. The walk (`ingest.walk`)
asks it of every file and folder it meets, so a folder handed to `ingest` never feeds a
password file, a `.git` object or a private key to capture; a file named on the command
line is read as asked, and redacted like any turn.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["folder_reason", "file_reason"]

# Version control's own folders: history and objects, never notes.
VCS_FOLDERS = frozenset(
    {".git", ".hg", ".svn", ".bzr", "_darcs", ".fossil", "cvs", ".jj", ".pijul"}
)

# Folders of keys and credentials (a home folder's, a project's).
KEY_FOLDERS = frozenset(
    {
        ".ssh", ".gnupg", ".gpg", ".aws", ".azure", ".kube", ".docker", ".password-store",
        ".secrets", "secrets", ".secret", ".vault", ".credentials", ".gcloud",
    }
)  # fmt: skip

# Files by exact name: credentials of common tools.
KEY_FILES = frozenset(
    {
        ".netrc", "_netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".htpasswd",
        ".dockercfg", ".my.cnf", ".envrc",
    }
)  # fmt: skip

# Key stores and key files, by suffix.
KEY_SUFFIXES = (
    ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".kdb", ".gpg", ".pgp",
    ".ppk", ".asc", ".p8", ".keychain", ".age",
)  # fmt: skip

# SSH private keys and their public halves, by prefix.
SSH_KEY_PREFIXES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "identity")

# One word of a name that says it holds secrets (folded: lower case, no accents, ё→е).
SECRET_WORDS = frozenset(
    """
    credential credentials creds secret secrets token tokens password passwords
    passwd passphrase passphrases apikey apikeys privatekey privkey
    пароль пароли паролей паролем секрет секреты секретов токен токены токенов
    учетка учетки креды
    motdepasse motsdepasse jeton jetons identifiants secrets
    contrasena contrasenas secreto secretos credenciales
    """.split()
)

# Several words that together say so ("api key", "mot de passe", "закрытый ключ").
SECRET_PHRASES: tuple[tuple[str, ...], ...] = (
    ("api", "key"), ("api", "keys"), ("private", "key"), ("private", "keys"),
    ("access", "key"), ("secret", "key"),
    ("mot", "de", "passe"), ("mots", "de", "passe"), ("cle", "privee"), ("cles", "privees"),
    ("cle", "api"), ("cles", "api"), ("clef", "privee"),
    ("clave", "privada"), ("claves", "privadas"), ("clave", "api"),
    ("закрытый", "ключ"), ("закрытые", "ключи"), ("приватный", "ключ"),
    ("api", "ключ"), ("api", "ключи"), ("учетные", "данные"),
)  # fmt: skip

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def folder_reason(name: str) -> str | None:
    """Why the folder called `name` is not walked into, or None."""
    low = name.lower()
    if low in VCS_FOLDERS:
        return f"a version-control folder ({name}); not read"
    if low in KEY_FOLDERS:
        return f"a folder of keys or secrets ({name}); not read"
    word = _secret_word(name)
    if word is not None:
        return f"a folder whose name says it holds secrets ({word!r}); not read"
    return None


def file_reason(name: str) -> str | None:
    """Why the file called `name` is not read, or None."""
    low = name.lower()
    if low == ".env" or low.startswith(".env.") or low.endswith(".env"):
        return "an environment file (.env); secrets are not read"
    if low in KEY_FILES:
        return f"a credentials file ({name}); not read"
    if low.startswith(SSH_KEY_PREFIXES):
        return f"an SSH key ({name}); not read"
    for suffix in KEY_SUFFIXES:
        if low.endswith(suffix):
            return f"a key or key store (*{suffix}); not read"
    word = _secret_word(name)
    if word is not None:
        return f"its name says it holds secrets ({word!r}); not read"
    return None


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.replace("ё", "е").replace("Ё", "Е"))
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def _secret_word(name: str) -> str | None:
    """The word (or words) of `name` saying it holds secrets: "api_token.md" → "token",
    "mots-de-passe.txt" → "mots de passe", "apiKey.json" → "api key"."""
    words = [_fold(w) for w in _WORD.findall(_CAMEL.sub(" ", name))]
    for word in words:
        if word in SECRET_WORDS:
            return word
    for phrase in SECRET_PHRASES:
        n = len(phrase)
        if any(tuple(words[i : i + n]) == phrase for i in range(len(words) - n + 1)):
            return " ".join(phrase)
    return None
