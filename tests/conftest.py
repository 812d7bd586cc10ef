"""Shared by every test: each test sees the package's one-time notices
(`utils.notices`) afresh, whatever ran before it in the worker."""

import pytest

from open_spiel_sog.utils import notices


@pytest.fixture(autouse=True)
def _fresh_notices():
  notices.forget()
  yield
