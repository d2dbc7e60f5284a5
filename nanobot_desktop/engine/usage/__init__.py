"""The usage record: every model call the app makes, what it cost, and the budget (see recorder.py)."""
