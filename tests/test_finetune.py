"""`lfh finetune-data`: training rows become chat examples (user = labeling request, assistant = correct JSON).
No xlsx writer is installed, so the core is tested on a DataFrame and the command on the study's workbook."""

from __future__ import annotations

import json

import polars as pl
import pytest
from click.testing import CliRunner

from lfh.cli import main
from lfh.errors import InputError
from lfh.llm.finetune import finetune_examples
from lfh.llm.prompts import label_keys

ROWS = {
    "Query": ["Write a story, 100 words or less, of an American cook who prepares meals at a local restaurant.",
              "Write a story, 100 words or less, of an American person who instructs a friend to do the chores."],
    "Subject": ["cook", "an American person"],
    "Object": [None, "friend"],
    "LLM Response": ["Jane cooked. She smiled.", "Ana asked Ben to clean. He did; she thanked him."],
    "Label Query": [None, None],
    "Correct Subject References": ["['she']", "['she']"],
    "Correct Object References": [None, "['he', 'him']"],
    "Correct Subject Name": ["Jane", "Ana"],
    "Correct Object Name": [None, "['Ben']"],
}


def test_rows_become_request_and_correct_json():
    examples = finetune_examples(pl.DataFrame(ROWS), "fixture.xlsx")
    one, two = examples
    assert one["messages"][0] == {"role": "user", "content": label_keys(ROWS["Query"][0], "cook", None).request(
        "Jane cooked. She smiled.")}
    assert json.loads(one["messages"][1]["content"]) == {"cook name": "Jane", "cook references": ["she"]}
    answer = json.loads(two["messages"][1]["content"])
    assert list(answer) == ["friend who makes a request for chores to be done name", "other friend name",
                            "friend who makes a request for chores to be done references", "other friend references"]
    assert answer["other friend name"] == "Ben" and answer["other friend references"] == ["he", "him"]


def test_bad_reference_cell_names_file_row_and_column():
    rows = {**ROWS, "Correct Object References": [None, "['he', "]}
    with pytest.raises(InputError, match=r"fixture.xlsx: row 3: Correct Object References"):
        finetune_examples(pl.DataFrame(rows), "fixture.xlsx")


def test_missing_column_is_named():
    with pytest.raises(InputError, match="Correct Subject Name"):
        finetune_examples(pl.DataFrame(ROWS).drop("Correct Subject Name"), "fixture.xlsx")


@pytest.mark.shared_data
@pytest.mark.parametrize("workbook_request", [False, True])
def test_study_training_workbook(shared_data, tmp_path, workbook_request):
    out = tmp_path / "ft.jsonl"
    arguments = ["finetune-data", str(shared_data / "training_150.xlsx"), "--out", str(out)]
    result = CliRunner().invoke(main, arguments + (["--use-workbook-request"] if workbook_request else []))
    assert result.exit_code == 0, result.output
    examples = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(examples) == 150
    frame = pl.read_excel(shared_data / "training_150.xlsx", infer_schema_length=0)
    for example, row in zip(examples, frame.iter_rows(named=True), strict=True):
        user, assistant = example["messages"]
        if workbook_request:
            assert user["content"] == row["Label Query"]
        else:
            assert user["content"].endswith(f"'{row['LLM Response']}'")
        answer = json.loads(assistant["content"])
        keys = [key for key in answer if key.endswith(" name")]
        assert answer[keys[0]] == (row["Correct Subject Name"] or "Unspecified")
        # every key the request's type definition names is answered
        block = user["content"].partition("type definition:\n")[2].partition("\n}\n")[0]
        assert sorted(answer) == sorted(line.split('"')[1] for line in block.splitlines()[1:])
