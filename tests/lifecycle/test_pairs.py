"""The learned decision over a pair (`lifecycle.pairs`): the shipped weights load for the
embedder they were trained on, and never for another; a few clear pairs (written here,
in no data set) are decided right."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from memoracle.embed import make_embedder
from memoracle.embed.local import UseEmbedder
from memoracle.lifecycle import pairs
from memoracle.lifecycle.pairs import CUES, LABELS, cues, features, load, read_model


@pytest.fixture(scope="module")
def use() -> UseEmbedder:
    return UseEmbedder()


def test_the_shipped_weights_fit_their_features() -> None:
    model = read_model()
    assert tuple(model.meta["labels"]) == LABELS
    width = 4 * 512 + 1 + CUES
    assert model.mean.shape == model.scale.shape == (width,)
    assert model.w.shape == (width, len(LABELS))
    bands = model.meta["bands"]
    assert 0 < bands["dispute"] <= bands["supersede"] < 1
    assert model.meta["held_out"]["leave_one_writer_out"]["by_label"]["all"]["pairs"] > 0


def test_no_model_without_its_embedder(tmp_path: object) -> None:
    assert load(None) is None
    assert load(make_embedder("hash")) is None  # vectors of another meaning


@pytest.mark.parametrize("damage", ["no bands", "not a zip"])
def test_weights_that_cannot_be_used_leave_the_rules_alone(
    use: UseEmbedder, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    # Off, said in the log, at load: never an error in a capture's transaction later.
    meta, arrays = pairs.weights(pairs.META, pairs.WEIGHTS)

    def damaged(meta_name: str, weights_name: str) -> tuple[dict[str, object], object]:
        if damage == "not a zip":
            raise zipfile.BadZipFile("File is not a zip file")
        return {k: v for k, v in meta.items() if k != "bands"}, arrays

    monkeypatch.setattr(pairs, "weights", damaged)
    assert load(use) is None


def test_cues_read_the_words() -> None:
    said = cues("I live in Paris.", "I moved from Paris to Lyon.")
    assert len(said) == CUES
    assert said[4] == 1.0 and said[5] == 1.0  # a name given (Lyon), a name kept (Paris)
    assert cues("Where is it?", "Is it here?")[7] == 1.0  # the new text asks
    row = features(np.ones(512) / np.sqrt(512), np.ones(512) / np.sqrt(512), "a", "a")
    assert row.shape == (4 * 512 + 1 + CUES,) and row[4 * 512] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("old", "new", "label"),
    [
        ("I live in Hamburg.", "We finally moved to Leipzig last month.", "update"),
        ("Я курю.", "Я бросил курить, уже полгода без сигарет.", "negate"),
        ("J'adore le jazz.", "J'aime aussi beaucoup le rock.", "coexist"),
        ("My brother lives in Oslo.", "I live in Bergen.", "coexist"),
        ("Vivo en Sevilla.", "I live in Seville.", "same"),
    ],
)
def test_clear_pairs(use: UseEmbedder, old: str, new: str, label: str) -> None:
    model = load(use)
    assert model is not None
    (decision,) = model.decide_texts([(old, new)])
    assert decision.label == label, decision.probabilities
    assert sum(decision.probabilities.values()) == pytest.approx(1.0, abs=1e-3)
