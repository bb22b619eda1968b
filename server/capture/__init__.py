"""Automatic capture: a session's transcript becomes memory (docs/capture.md)."""
