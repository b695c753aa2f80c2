"""Argument types shared by the ``mockkube`` commands: argparse reports a bad value as a
usage error (exit 2, one line) rather than a traceback."""

from __future__ import annotations

import argparse

from mockkube.machinery.durations import parse_duration


def duration(text: str) -> float:
    """A Go-style duration ("1m30s", "250ms") in seconds."""
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_duration(text: str) -> float:
    seconds = duration(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive, got {text!r}")
    return seconds
