"""Updates: how this copy was installed, the signed update channel, and the bundle's versions on disk.

Qt-free and cheap to import: `bundle.apply_pending` runs at every start of a bundle install before
anything else, and `tufup` (with `tuf`, `requests` and `cryptography` behind it) is imported only by
`check.py`, when a check actually runs. The GUI (Help → Check for updates, the daily check) and the
CLI (`nanobot-desktop update`) both call `check.check_for_update` off the GUI thread.
"""
