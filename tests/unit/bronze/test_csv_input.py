"""CSV input for ``dkg simulate --input``: header optional, bad lines named."""

from __future__ import annotations

import pytest

from bronze.datasets.csv_input import CsvInputError, read_csv_tuples


def _write(tmp_path, text, name="tuples.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _read(path, batch_size=10_000):
    batches = list(read_csv_tuples(path, batch_size=batch_size))
    return (
        [k for b in batches for k in b.keys.tolist()],
        [c for b in batches for c in b.counts.tolist()],
        [t for b in batches for t in b.event_times_ms.tolist()],
    )


ROWS = (["a", "Côte d'Ivoire", "a,b"], [1, 5, 2], [1000, 1001, -3])
BODY = 'a,1,1000\nCôte d\'Ivoire,5,1001\n"a,b",2,-3\n'


@pytest.mark.parametrize(
    "header", ["", "key,count,timestamp_ms\n", " KEY , Count,TIMESTAMP_MS\r\n"]
)
def test_reads_with_or_without_header(tmp_path, header):
    assert _read(_write(tmp_path, header + BODY)) == ROWS


def test_crlf_blank_lines_and_batches(tmp_path):
    path = _write(tmp_path, "\r\n" + BODY.replace("\n", "\r\n") + "\r\n\r\n")
    batches = list(read_csv_tuples(path, batch_size=2))
    assert [len(b) for b in batches] == [2, 1]
    assert batches[0].keys.dtype == object and batches[0].counts.dtype == "int64"
    assert _read(path, 2) == ROWS


def test_empty_file_gives_no_batches(tmp_path):
    assert list(read_csv_tuples(_write(tmp_path, ""))) == []
    assert list(read_csv_tuples(_write(tmp_path, "key,count,timestamp_ms\n", "h.csv"))) == []


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("a,1,1000\nb,1\n", 2, "expected 3 fields"),
    ("a,1,1000\nb,1,2,3\n", 2, "expected 3 fields"),
    ("key,count,timestamp_ms\na,1,1\n,1,1000\n", 3, "empty key"),
    ("a,1,1\n  ,1,1000\n", 2, "empty key"),
    ("a,0,1000\n", 1, "not a positive integer"),
    ("a,-2,1000\n", 1, "not a positive integer"),
    ("a,1.5,1000\n", 1, "not a positive integer"),
    ("a,x,1000\n", 1, "not a positive integer"),
    ("a,1,1000\nb,1,soon\n", 2, "not an integer"),
    ("a,1,1.0e12\n", 1, "not an integer"),
    ("key,count,time\na,1,1\n", 1, "not a positive integer"),
])  # fmt: skip
def test_bad_line_names_file_and_line(tmp_path, text, line, problem):
    path = _write(tmp_path, text)
    with pytest.raises(CsvInputError) as caught:
        _read(path)
    message = str(caught.value)
    assert str(path) in message
    assert f"line {line}:" in message
    assert problem in message


def test_header_only_on_the_first_row(tmp_path):
    with pytest.raises(CsvInputError, match="line 2"):
        _read(_write(tmp_path, "a,1,1\nkey,count,timestamp_ms\n"))


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(CsvInputError, match=r"nope\.csv.*does not exist"):
        read_csv_tuples(missing)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(CsvInputError, match="is not a file"):
        read_csv_tuples(tmp_path)


def test_not_utf8(tmp_path):
    with pytest.raises(CsvInputError, match="not UTF-8"):
        _read(_write(tmp_path, b"a,1,1\n\xff\xfe,1,2\n"))


@pytest.mark.parametrize(("row", "problem"), [
    ("a,1," + "9" * 5000, "timestamp_ms '9999"),  # int() refuses more than 4300 digits
    ("a," + "9" * 5000 + ",1", "count '9999"),
    ("a,1,-" + "9" * 20, "not an integer"),
])  # fmt: skip
def test_numbers_far_beyond_int64_are_a_bad_line(tmp_path, row, problem):
    path = _write(tmp_path, f"b,1,1\n{row}\n")
    with pytest.raises(CsvInputError, match="line 2") as caught:
        _read(path)
    assert problem in str(caught.value) and len(str(caught.value)) < 200


def test_leading_zeros_do_not_count_against_int64(tmp_path):
    assert _read(_write(tmp_path, "a," + "0" * 5000 + "7,1\n")) == (["a"], [7], [1])
