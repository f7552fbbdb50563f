"""Scenario files and links, uploads, exports."""
