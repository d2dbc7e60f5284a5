"""A workspace kept in sync between machines by a file-sync tool (Syncthing, Dropbox, Nextcloud, OneDrive).

The tool, not the app, moves the files; what the app adds is what a sync tool cannot know: how to merge
two versions of an append-only session file without losing a line (`sessions`), which file is a
conflict copy of which and from which device (`names`), and which machine runs the background work.
"""
