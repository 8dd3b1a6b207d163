"""Shared fixtures: the real data in ../shared/data (skipped when absent) and the shipped sample."""

from __future__ import annotations

from pathlib import Path

import pytest

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
