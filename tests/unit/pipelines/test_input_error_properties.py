"""Generated mistakes in the files a user hands ``dkg``: one line on stderr, exit code 2.

The CSV input (``dkg simulate --input``), ``--config`` overlays (``dkg config
show``) and job specs (``dkg job validate``) are generated from valid ones with
mistakes put in: wrong fields, values of other types, unknown keys, sections
replaced, text cut short or bytes changed. Each command either succeeds or
fails with its error type's one line (``dkg <command>: error: ...``), never a
traceback. No Spark, no broker.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.config import default_conf_dir
from pipelines.cli import main
from tests.unit.strategies import damaged

# capsys and tmp_path are function-scoped: every example drains the capture and rewrites the file.
_FIXTURES = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                            HealthCheck.too_slow])  # fmt: skip


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    if code != 0:
        lines = captured.err.strip().splitlines()
        assert code == 2 and len(lines) == 1, captured.err
        assert lines[0].startswith(f"dkg {argv[0]}: error: "), lines[0]
        return code, lines[0]
    return code, captured.out


# --- CSV input -----------------------------------------------------------------------------

keys = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n\x00"),
               min_size=1, max_size=8).filter(lambda k: k.strip())  # fmt: skip
good_rows = st.tuples(keys, st.integers(1, (1 << 63) - 1).map(str),
                      st.integers(-(1 << 63) + 1, (1 << 63) - 1).map(str))  # fmt: skip
numbers = st.one_of(st.sampled_from(["0", "-1", "1.5", "x", "", " ", "1e3", "9223372036854775808",
                                     "-9223372036854775809", "9" * 5000, "0" * 5000 + "1x",
                                     "0" * 5000 + "1"]),
                    st.text(max_size=6))  # fmt: skip


def _int_within(text: str, low: int) -> bool:
    """Whether the reader must accept ``text`` as an integer from ``low`` to int64's max."""
    text = text.strip()
    digits = text.lstrip("+-")
    if not (digits.isascii() and digits.isdigit()) or len(text) - len(digits) > 1:
        return False
    digits = digits.lstrip("0") or "0"
    if len(digits) > 19:
        return False
    value = -int(digits) if text.startswith("-") else int(digits)
    return low <= value <= (1 << 63) - 1


bad_rows = st.one_of(
    st.tuples(keys, st.integers(1, 9).map(str)),  # a field missing
    st.tuples(keys, st.integers(1, 9).map(str), st.just("5"), st.just("extra")),
    st.tuples(st.sampled_from(["", " ", "\t"]), st.just("1"), st.just("5")),  # blank key
    st.tuples(keys, numbers, st.just("5")).filter(lambda r: not _int_within(r[1], 1)),
    st.tuples(keys, st.just("1"), numbers).filter(lambda r: not _int_within(r[2], -(1 << 63) + 1)),
    st.tuples(keys, st.just("1"), st.integers(20, 5000).map(lambda n: "9" * n)),  # beyond int64
)  # fmt: skip


def _csv_text(rows: list[tuple[str, ...]], header: bool) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(["key", "count", "timestamp_ms"])
    writer.writerows(rows)
    return buffer.getvalue()


@settings(_FIXTURES)
@given(rows=st.lists(good_rows, min_size=1, max_size=6), bad=st.none() | bad_rows,
       at=st.integers(0, 6), header=st.booleans())  # fmt: skip
def test_csv_input_with_a_bad_row_names_its_line(capsys, tmp_path, rows, bad, at, header):
    if bad is not None:
        rows.insert(min(at, len(rows)), bad)
    path = tmp_path / "tuples.csv"
    path.write_text(_csv_text(rows, header), encoding="utf-8")
    code, text = _run(capsys, ["simulate", "--input", str(path), "--grouping", "KEY",
                               "--workers", "2"])  # fmt: skip
    if bad is None:
        assert code == 0 and f"{len(rows)} tuples" in text
    else:
        assert code == 2 and f"line {rows.index(bad) + 1 + header}" in text


@settings(_FIXTURES)
@given(data=damaged(st.lists(good_rows, min_size=1, max_size=6).map(
    lambda rows: _csv_text(rows, True).encode())) | st.binary(max_size=60))  # fmt: skip
def test_damaged_csv_input_is_read_or_refused_in_one_line(capsys, tmp_path, data):
    path = tmp_path / "tuples.csv"
    path.write_bytes(data)
    _run(capsys, ["simulate", "--input", str(path), "--grouping", "KEY", "--workers", "2"])


# --- YAML: --config overlays and job specs -----------------------------------------------

yaml_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=6), st.sampled_from(["KEY", "DYNAMIC_KEY", "-1", "1e3", "{{x}}"])),
    lambda children: st.one_of(st.lists(children, max_size=3),
                               st.dictionaries(st.text(max_size=6), children, max_size=3)),
    max_leaves=6,
)  # fmt: skip


def _paths(value: object, path: tuple = ()) -> list[tuple]:
    """Every path into nested dicts and lists, the root included."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


@st.composite
def mistaken(draw: st.DrawFn, document: dict) -> bytes:
    """``document`` as YAML with one to three mistakes: a value replaced or removed, a key
    added, or the text cut short or with bytes changed."""
    data = yaml.safe_load(yaml.safe_dump(document))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if not path:
            if action == "replace":
                data = draw(yaml_values)
            continue
        if action == "remove":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.text(min_size=1, max_size=6))] = draw(yaml_values)
        else:
            parent[path[-1]] = draw(yaml_values)
        if not isinstance(data, dict | list):
            break
    text = yaml.safe_dump(data, allow_unicode=draw(st.booleans())).encode()
    return draw(st.one_of(st.just(text), damaged(st.just(text))))


def _yaml_file(relative: str) -> dict:
    return yaml.safe_load((default_conf_dir() / relative).read_text(encoding="utf-8"))


CONFIG = _yaml_file("base.yaml")
JOB_SPEC = _yaml_file("jobs/lakehouse.yml")


@settings(_FIXTURES)
@given(data=mistaken(CONFIG) | st.binary(max_size=40))
def test_config_overlay_with_mistakes_is_loaded_or_refused_in_one_line(capsys, tmp_path, data):
    path = tmp_path / "overlay.yaml"
    path.write_bytes(data)
    _run(capsys, ["config", "show", "--config", str(path)])


@settings(_FIXTURES)
@given(data=mistaken(JOB_SPEC) | st.binary(max_size=40))
def test_job_spec_with_mistakes_is_valid_or_refused_in_one_line(capsys, tmp_path, data):
    path = tmp_path / "job.yml"
    path.write_bytes(data)
    _run(capsys, ["job", "validate", str(path)])


def test_the_unchanged_files_are_valid(capsys, tmp_path):
    for name, document, argv in [("overlay.yaml", CONFIG, ["config", "show", "--config"]),
                                 ("job.yml", JOB_SPEC, ["job", "validate"])]:  # fmt: skip
        path = Path(tmp_path / name)
        path.write_text(yaml.safe_dump(document), encoding="utf-8")
        assert _run(capsys, [*argv, str(path)])[0] == 0
