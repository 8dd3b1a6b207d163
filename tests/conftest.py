"""Shared fixtures: the real data in ../shared/data (skipped when absent) and the shipped sample."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from openmsd.ingest.report import Report

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the repository; tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture
def report() -> Report:
    return Report()


@pytest.fixture(scope="module")
def shared_data_module() -> Path:
    """``../shared/data`` for module-scoped fixtures."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


# CI runs the fuzz tests with a fixed sequence of examples (reproducible landings); locally they
# explore new inputs on every run.
if os.environ.get("CI"):
    settings.register_profile("ci", derandomize=True, database=None)
    settings.load_profile("ci")
