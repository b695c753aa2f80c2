"""PodLogOptions from a query, decoded once for the API server's pods/log and a kubelet's
/containerLogs (machinery/podlogoptions.py): apimachinery's conversions (strconv's integers,
lenient booleans) and the checks on what decoded."""

from __future__ import annotations

import pytest

from mockkube.machinery import errors
from mockkube.machinery.podlogoptions import PodLogOptions, decode


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


def test_since_seconds_counts_back_from_now_and_wins_over_since_time():
    opts = decode({"sinceSeconds": "30", "sinceTime": "not a time"})
    assert opts.since(1000.0) == 970.0


@pytest.mark.parametrize(
    "query,message",
    [
        ({"tailLines": "ten"}, 'strconv.ParseInt: parsing "ten": invalid syntax'),
        ({"tailLines": ""}, 'strconv.ParseInt: parsing "": invalid syntax'),
        (
            {"limitBytes": "99999999999999999999"},
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
        ),
        ({"sinceSeconds": "0"}, "sinceSeconds must be greater than 0"),
        ({"limitBytes": "-1"}, "limitBytes must be greater than 0"),
        ({"sinceTime": "yesterday"}, "invalid sinceTime: "),
    ],
)
def test_what_does_not_decode_is_a_400(query, message):
    with pytest.raises(errors.APIError) as e:
        decode(query)
    assert e.value.code == 400 and e.value.message.startswith(message)
