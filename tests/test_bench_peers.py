"""The pure parts of the peers benchmark (bench/peers.py, bench/embed_server.py): scoring,
the job a peer reads, reading a peer's answer, and the loopback embeddings endpoint.
None of it needs a peer installed."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoracle.embed import HashEmbedder, OpenAIEmbedder
from memoracle.jobs.bench.run import Sample, read_samples

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import embed_server  # noqa: E402
import peers  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return read_samples(FIXTURE, lambda _: None)


# -- scoring -----------------------------------------------------------------------------------


def test_score_is_the_mean_fraction_of_evidence_in_the_top_k() -> None:
    found = [f"D1:{i}" for i in range(1, 61)]  # D1:1 first, D1:60 last
    scored = peers.score(
        [
            (("D1:1", "D1:7"), found),  # one in the top 5, both in the top 10
            (("D1:30",), found),  # only from k = 50 on
            ((), found),  # no evidence: not counted
        ]
    )
    assert scored == {"R@5": 0.25, "R@10": 0.5, "R@20": 0.5, "R@50": 1.0}


def test_score_without_questions_is_zero_not_an_error() -> None:
    assert peers.score([((), ["D1:1"])]) == {"R@5": 0.0, "R@10": 0.0, "R@20": 0.0, "R@50": 0.0}


# -- the job a peer reads ----------------------------------------------------------------------


def test_questions_keep_categories_one_to_four_with_repaired_evidence(
    samples: list[Sample],
) -> None:
    asked = peers.questions(samples[0])
    categories = [int(qa.get("category", 0)) for qa in samples[0].qa]
    assert len(asked) == sum(1 for c in categories if c in (1, 2, 3, 4)) < len(categories)
    # "D1:5; D3:1" in one string is two evidence turns
    assert any(set(ev) == {"D1:5", "D3:1"} for _, ev in asked)


def test_job_gives_every_turn_with_speaker_and_date_and_every_question(
    samples: list[Sample],
) -> None:
    job = peers.build_job(samples, 50, embedding_dims=8)
    assert job["k"] == 50 and job["embedding_dims"] == 8
    assert len(job["conversations"]) == len(samples)
    for sample, conv in zip(samples, job["conversations"], strict=True):
        assert [t["id"] for t in conv["turns"]] == [t.turn_id for t in sample.turns]
        assert conv["questions"] == [q for q, _ in peers.questions(sample)]
        first = sample.turns[0]
        assert first.speaker and first.at
        text = conv["turns"][0]["text"]
        assert text.startswith(first.speaker + " ") and text.endswith(first.text)
        assert str(first.at.year) in text  # the session's date, in words
    json.dumps(job)  # what goes down the pipe


# -- reading a peer's answer -------------------------------------------------------------------


def _answer(samples: list[Sample], pick: Any) -> dict[str, Any]:
    return {
        "versions": {"peer": "1.0"},
        "mode": "test",
        "conversations": [
            {
                "ingest_s": 0.5,
                "search_s": [0.002] * len(peers.questions(s)),
                "found": [pick(ev) for _, ev in peers.questions(s)],
            }
            for s in samples
        ],
    }


def test_peer_row_scores_what_the_peer_found(samples: list[Sample]) -> None:
    perfect = peers.peer_row("peer", samples, _answer(samples, list))
    assert perfect["system"] == "peer (test)" and perfect["versions"] == {"peer": "1.0"}
    assert perfect["R@5"] == 1.0 and perfect["R@50"] == 1.0
    turns = sum(len(s.turns) for s in samples)
    assert perfect["ingest_turns_per_s"] == round(turns / (0.5 * len(samples)), 1)
    assert perfect["search"]["p50_ms"] == 2.0
    nothing = peers.peer_row("peer", samples, _answer(samples, lambda ev: []))
    assert nothing["R@50"] == 0.0 and nothing["questions"] == perfect["questions"] > 0


def test_peer_row_refuses_an_answer_that_does_not_match_the_job(samples: list[Sample]) -> None:
    short = _answer(samples, list)
    short["conversations"][0]["found"].pop()
    with pytest.raises(ValueError, match="answers for"):
        peers.peer_row("peer", samples, short)
    with pytest.raises(ValueError, match="conversations answered"):
        peers.peer_row("peer", samples[:1], _answer(samples, list))


# -- the loopback embeddings endpoint ----------------------------------------------------------


@pytest.fixture
def endpoint() -> Iterator[str]:
    server, base = embed_server.serve_in_background(HashEmbedder())
    yield base
    server.shutdown()
    server.server_close()


def test_endpoint_gives_the_embedders_vectors_to_an_openai_client(endpoint: str) -> None:
    assert endpoint.startswith("http://127.0.0.1:")
    client = OpenAIEmbedder("hash-model", endpoint=endpoint)
    texts = ["I painted a sunset.", "Caroline went to the support group."]
    expected = HashEmbedder().embed_documents(texts)
    assert np.allclose(client.embed_documents(texts), expected, atol=1e-6)
    assert np.allclose(client.embed_query(texts[0]), expected[0], atol=1e-6)


def _post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_endpoint_answers_a_single_string_in_openais_shape(endpoint: str) -> None:
    code, data = _post(endpoint + "/embeddings", b'{"model": "m", "input": "hello"}')
    assert code == 200 and data["object"] == "list" and data["model"] == "m"
    assert [item["index"] for item in data["data"]] == [0]
    assert len(data["data"][0]["embedding"]) == HashEmbedder().dim


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"input": []}', "non-empty list"),
        (b'{"input": [[1, 2, 3]]}', "'input'[0] must be a string"),
    ],
)
def test_endpoint_refuses_bad_requests_with_a_400_naming_the_field(
    endpoint: str, body: bytes, message: str
) -> None:
    code, data = _post(endpoint + "/embeddings", body)
    assert code == 400 and message in data["error"]["message"]


def test_endpoint_has_only_the_embeddings_path(endpoint: str) -> None:
    code, data = _post(endpoint.removesuffix("/v1") + "/v1/chat/completions", b"{}")
    assert code == 404 and "no such path" in data["error"]["message"]
