"""The containers-only unpickler: builtin containers and strings load, any object reference is refused."""

from __future__ import annotations

import io
import pickle
from collections import OrderedDict
from pathlib import Path

import pytest

from lfh.lexicon.unpickle import RefusedPickleError, load_containers_only, load_name_nationalities


class _WritesAFile:
    """Unpickling this with a normal unpickler would call Path.write_text: the side effect proves refusal."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self):
        return (Path.write_text, (self.target, "executed"))


def test_names_with_demonym_lists_load() -> None:
    table = {"Ahmed Zewail": ["Egyptian", "American"], "Sione Tuipulotu": ["Tongan"]}
    data = pickle.dumps(table, protocol=3)
    assert load_name_nationalities(data, "t.pkl") == table


def test_object_reference_is_refused_before_it_runs(tmp_path: Path) -> None:
    target = tmp_path / "side_effect.txt"
    data = pickle.dumps({"Eve": _WritesAFile(target)})
    with pytest.raises(RefusedPickleError, match=r"t\.pkl: pickle refers to .*write_text"):
        load_name_nationalities(data, "t.pkl")
    assert not target.exists()
    # the standard unpickler would have run it: the test above can fail
    pickle.loads(data)
    assert target.read_text() == "executed"


def test_even_harmless_classes_are_refused() -> None:
    with pytest.raises(RefusedPickleError, match="collections.OrderedDict"):
        load_containers_only(pickle.dumps(OrderedDict(a=1)))


def test_persistent_ids_are_refused() -> None:
    class WithPersistentId(pickle.Pickler):
        def persistent_id(self, obj: object) -> str | None:
            return "external" if obj == "secret" else None

    buffer = io.BytesIO()
    WithPersistentId(buffer).dump({"a": ["secret"]})
    with pytest.raises(RefusedPickleError, match="persistent id"):
        load_containers_only(buffer.getvalue())


def test_wrong_shapes_name_the_entry() -> None:
    with pytest.raises(TypeError, match="expected a dict"):
        load_name_nationalities(pickle.dumps(["not", "a", "dict"]), "t.pkl")
    with pytest.raises(TypeError, match=r"entry 'Bob' -> 'Welsh' is not a name with a list"):
        load_name_nationalities(pickle.dumps({"Ann": ["Welsh"], "Bob": "Welsh"}), "t.pkl")
    with pytest.raises(TypeError, match=r"entry 'Cy'"):
        load_name_nationalities(pickle.dumps({"Cy": ["Welsh", 3]}), "t.pkl")


def test_truncated_pickle_is_a_clear_error() -> None:
    data = pickle.dumps({"Ann": ["Welsh"]})[:-5]
    with pytest.raises(pickle.UnpicklingError, match=r"t\.pkl: not a readable pickle"):
        load_name_nationalities(data, "t.pkl")
