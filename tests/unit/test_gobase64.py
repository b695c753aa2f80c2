"""Go's base64.StdEncoding decoder (encoding/json's []byte): ported cases from Go's
src/encoding/base64/base64_test.go, case by case."""

from __future__ import annotations

import pytest

from mockkube.machinery import gobase64

# TestDecodeCorrupt: (input, offset of the CorruptInputError, -1 when it decodes)
DECODE_CORRUPT = [
    ("", -1),
    ("\n", -1),
    ("AAA=\n", -1),
    ("AAAA\n", -1),
    ("!!!!", 0),
    ("====", 0),
    ("x===", 1),
    ("=AAA", 0),
    ("A=AA", 1),
    ("AA=A", 2),
    ("AA==A", 4),
    ("AAA=AAAA", 4),
    ("AAAAA", 4),
    ("AAAAAA", 4),
    ("A=", 1),
    ("A==", 1),
    ("AA=", 3),
    ("AA==", -1),
    ("AAA=", -1),
    ("AAAA", -1),
    ("AAAAAA=", 7),
    ("YWJjZA=====", 8),
    ("A!\n", 1),
    ("A=\n", 1),
]


@pytest.mark.parametrize("text,offset", DECODE_CORRUPT)
def test_decode_corrupt(text, offset):
    if offset == -1:
        gobase64.decode(text)
        assert gobase64.error(text) == ""
    else:
        with pytest.raises(gobase64.Base64Error) as e:
            gobase64.decode(text)
        assert e.value.offset == offset
        assert str(e.value) == f"illegal base64 data at input byte {offset}"


# TestNewLineCharacters: each decodes to "sure"
NEWLINES = [
    "c3VyZQ==",
    "c3VyZQ==\r",
    "c3VyZQ==\n",
    "c3VyZQ==\r\n",
    "c3VyZ\r\nQ==",
    "c3V\ryZ\nQ==",
    "c3V\nyZ\rQ==",
    "c3VyZ\nQ==",
    "c3VyZQ\n==",
    "c3VyZQ=\n=",
    "c3VyZQ=\r\n\r\n=",
]


@pytest.mark.parametrize("text", NEWLINES)
def test_newline_characters(text):
    assert gobase64.decode(text) == b"sure"
    assert gobase64.canonical(text) == "c3VyZQ=="


def test_wrapped_at_76_columns_round_trips_without_line_breaks():
    import base64

    data = bytes(range(256)) * 3
    flat = base64.b64encode(data).decode()
    wrapped = "\n".join(flat[i : i + 76] for i in range(0, len(flat), 76)) + "\n"
    assert gobase64.decode(wrapped) == data
    assert gobase64.canonical(wrapped) == flat


def test_trailing_bits_are_not_strict_and_canonical_zeroes_them():
    assert gobase64.decode("QR==") == b"A"  # Go's StdEncoding is not Strict()
    assert gobase64.canonical("QR==") == "QQ=="


def test_non_ascii_is_illegal_at_its_byte():
    assert gobase64.error("QQ==é") == "illegal base64 data at input byte 4"
    assert gobase64.error("é") == "illegal base64 data at input byte 0"
