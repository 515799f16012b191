"""Simulated hardware for the virtual unit and the tests."""
