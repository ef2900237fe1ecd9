"""The replay of recorded vectors that keeps the app's snapshots the same on every CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from clawmem.engine.embed.llama_provider import LlamaEmbeddingProvider
from clawmem.engine.embed.provider import provider_key

from tests.tui import recorded_embeddings
from tests.tui.recorded_embeddings import RecordedProvider, Recording, text_key


@pytest.fixture(scope="module")
def real(default_model_path: Path) -> LlamaEmbeddingProvider:
    return LlamaEmbeddingProvider(default_model_path, n_threads=1)


@pytest.fixture(autouse=True)
def _replaying(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about replaying, also while `make record-embeddings` runs them."""
    monkeypatch.setattr(recorded_embeddings, "RECORD", False)


def test_a_recorded_text_is_answered_from_the_recording_and_a_new_one_is_reported(
    real: LlamaEmbeddingProvider, tmp_path: Path
) -> None:
    recording = Recording(tmp_path / "none.npz")
    marker = np.zeros(real.dims, dtype=np.float32)
    marker[0] = 1.0  # not what the model gives: proves the answer came from the recording
    recording.vectors[text_key("passage", "返程车票已经订好了")] = marker
    provider = RecordedProvider(real, recording)
    assert provider_key(provider) == provider_key(real)  # the index sees the same embedder

    assert np.array_equal(provider.embed_passages(["返程车票已经订好了"])[0], marker)
    assert recording.missing == []

    live = provider.embed_query("has the return ticket been booked")
    assert np.allclose(live, real.embed_query("has the return ticket been booked"), atol=1e-5)
    assert recording.missing == ["query 'has the return ticket been booked'"]
    provider.embed_query("has the return ticket been booked")  # now in the recording
    assert len(recording.missing) == 1
    assert set(recording.used) == {
        text_key("passage", "返程车票已经订好了"),
        text_key("query", "has the return ticket been booked"),
    }


def test_a_saved_recording_reads_back_and_refuses_another_model(
    real: LlamaEmbeddingProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rec.npz"
    recording = Recording(path)
    vec = RecordedProvider(real, recording).embed_passages(["- Prefers window seats."])[0]
    recording.save(fresh=True)

    again = Recording(path)
    assert again.key == provider_key(real)
    assert np.array_equal(again.vectors[text_key("passage", "- Prefers window seats.")], vec)

    merged = Recording(path)  # a run of a few tests adds to the file, keeping what others need
    RecordedProvider(real, merged).embed_passages(["- Never book hotels without a refund."])
    merged.save(fresh=False)
    assert len(Recording(path).vectors) == 2
    merged.save(fresh=True)
    assert len(Recording(path).vectors) == 1  # only what that run used

    again.key = "another model's key"
    with pytest.raises(RuntimeError, match="make record-embeddings"):
        RecordedProvider(real, again)
    monkeypatch.setattr(recorded_embeddings, "RECORD", True)  # recording anew drops its vectors
    RecordedProvider(real, again)
    assert again.vectors == {} and again.key == provider_key(real)
