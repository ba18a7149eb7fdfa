"""Tests in headless Chromium (see conftest.py)."""
