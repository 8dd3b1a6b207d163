"""The rankers file as typed entries: what is read is what was written, and an entry that is
not one is refused before anything is written, naming the entry and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openmsd.rank import RankerEntry
from openmsd.rank.tuned_file import read_tuned, write_tuned

LEARNED = {"members": ["bm25@same", "e5-small-multilingual"], "method": "model",
           "paper": {"members": ["bm25@same"], "model": None, "method": "zscore",
                     "weights": [1.0], "calibration": {"x": [0.0, 1.0], "y": [0.0, 0.4]}},
           "selection": {"paper": {"chosen": "bm25@same"}}}
PLAIN = {"members": ["bm25", "authors"], "weights": [0.7, 0.3], "method": "weighted",
         "fallbacks": [{"silent": ["authors"], "members": ["bm25"], "weights": [1.0],
                        "method": "weighted"}], "tuned": False}


def test_entries_read_back_as_they_were_written(tmp_path: Path) -> None:
    path = tmp_path / "ranker.json"
    write_tuned(path, {"hybrid": RankerEntry.from_json(LEARNED), "hybrid-graph": dict(PLAIN)},
                "build-1")
    found = read_tuned(path, tmp_path)
    assert found["hybrid"].paper == LEARNED["paper"] and found["hybrid"].method == "model"
    assert found["hybrid"].record["selection"] == LEARNED["selection"]
    assert found["hybrid"].record["corpus_build"] == "build-1"
    plain = found["hybrid-graph"]
    assert plain.weights == (0.7, 0.3) and not plain.tuned
    assert plain.fallbacks[0].members == ("bm25",) and plain.fallbacks[0].silent == ("authors",)
    assert RankerEntry.from_json(plain.as_json()) == plain


@pytest.mark.parametrize("damage, said", [
    ({"weights": [0.7, float("nan")]}, "weights"),
    ({"members": []}, "members"),
    ({"method": "vote"}, "method"),
    ({"fallbacks": [{"silent": ["nobody"], "members": ["bm25"], "weights": [1.0]}]},
     "fallback 0"),
])
def test_an_entry_that_is_not_one_is_refused_before_anything_is_written(
        tmp_path: Path, damage: dict, said: str) -> None:
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps({"hybrid": PLAIN}))
    with pytest.raises(ValueError, match=f"ranker.json: hybrid-graph: .*{said}"):
        write_tuned(path, {"hybrid": dict(PLAIN), "hybrid-graph": {**PLAIN, **damage}}, None)
    assert json.loads(path.read_text()) == {"hybrid": PLAIN}  # the old file stands, whole
    assert not list(tmp_path.glob("*.partial"))
