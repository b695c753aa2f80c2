"""PodLogOptions from a query, decoded once for the API server's pods/log and a kubelet's
/containerLogs (machinery/podlogoptions.py): apimachinery's conversions (strconv's integers,
lenient booleans) and ValidatePodLogOptions' checks on what decoded (pkg/apis/core/validation)."""

from __future__ import annotations

import pytest

from mockkube.machinery import errors
from mockkube.machinery.podlogoptions import PodLogOptions, decode, validate


def test_a_full_query_decodes():
    opts = decode(
        {
            "container": "app",
            "follow": "true",
            "previous": "1",
            "timestamps": "yes",  # Convert_Slice_string_To_bool: anything but 0 and false
            "tailLines": "10",
            "sinceTime": "2026-01-01T00:00:00Z",
            "limitBytes": "100",
        }
    )
    assert opts == PodLogOptions("app", True, True, True, 10, None, 1767225600.0, 100)
    assert opts.since(2e9) == 1767225600.0


def test_nothing_asked_is_everything():
    opts = decode({})
    assert opts == PodLogOptions() and opts.since(100.0) is None
    assert decode({"follow": "false", "previous": "0", "timestamps": "FALSE"}) == PodLogOptions()


def test_since_seconds_counts_back_from_now():
    opts = decode({"sinceSeconds": "30"})
    assert opts.since(1000.0) == 970.0 and validate(opts) == []


@pytest.mark.parametrize(
    "query,message",
    [
        ({"tailLines": "ten"}, 'strconv.ParseInt: parsing "ten": invalid syntax'),
        ({"tailLines": ""}, 'strconv.ParseInt: parsing "": invalid syntax'),
        (
            {"limitBytes": "99999999999999999999"},
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
        ),
        ({"sinceTime": "yesterday"}, "invalid sinceTime: "),
        ({"sinceSeconds": "30", "sinceTime": "not a time"}, "invalid sinceTime: "),  # both are decoded
    ],
)
def test_what_does_not_decode_is_a_400(query, message):
    with pytest.raises(errors.APIError) as e:
        decode(query)
    assert e.value.code == 400 and e.value.message.startswith(message)


@pytest.mark.parametrize(
    "query,expected",
    [
        ({"tailLines": "-1"}, ["tailLines: Invalid value: -1: must be greater than or equal to 0"]),
        ({"limitBytes": "0"}, ["limitBytes: Invalid value: 0: must be greater than 0"]),
        ({"sinceSeconds": "0"}, ["sinceSeconds: Invalid value: 0: must be greater than 0"]),
        (
            {"sinceSeconds": "0", "sinceTime": "2026-01-01T00:00:00Z", "tailLines": "-2"},
            [
                "tailLines: Invalid value: -2: must be greater than or equal to 0",
                "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
            ],
        ),
        ({"tailLines": "0", "limitBytes": "1", "sinceSeconds": "1"}, []),
    ],
)
def test_what_decoded_is_validated_as_upstream(query, expected):
    assert [str(e) for e in validate(decode(query))] == expected
