#!/bin/sh
# Install (or update, or remove) nanobot Desktop for the current user, from the unpacked tarball.
#
#   ./install.sh              copy the app to ~/.local/share/nanobot-desktop, link ~/.local/bin/nanobot-desktop,
#                             add the menu entry and the icon
#   ./install.sh --uninstall  remove exactly those again (your workspace and ~/.nanobot are never touched)
#
# PREFIX=/some/dir ./install.sh installs under that folder instead of ~/.local. No root needed.
set -eu

PREFIX="${PREFIX:-$HOME/.local}"
HERE="$(cd "$(dirname "$0")" && pwd)"
APP_DIR="$PREFIX/share/nanobot-desktop"
BIN_LINK="$PREFIX/bin/nanobot-desktop"
DESKTOP_FILE="$PREFIX/share/applications/io.github.nanobot_desktop.NanobotDesktop.desktop"
ICON_FILE="$PREFIX/share/icons/hicolor/scalable/apps/nanobot-desktop.svg"
# Versions before the application id named the menu entry nanobot-desktop.desktop: never two entries.
LEGACY_DESKTOP_FILE="$PREFIX/share/applications/nanobot-desktop.desktop"

refresh_caches() {
    if command -v update-desktop-database >/dev/null 2>&1; then
        update-desktop-database -q "$PREFIX/share/applications" 2>/dev/null || true
    fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1; then
        gtk-update-icon-cache -q -t "$PREFIX/share/icons/hicolor" 2>/dev/null || true
    fi
}

# What the app's own updates keep beside it (nanobot_desktop/updates/bundle.py): the next version, the
# one before (for a roll-back), and an unfinished download's staging folder.
UPDATE_DIRS="$APP_DIR.pending $APP_DIR.previous $PREFIX/share/.nanobot-desktop.staging"

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$APP_DIR"
    for folder in $UPDATE_DIRS; do rm -rf "$folder"; done
    rm -f "$BIN_LINK" "$DESKTOP_FILE" "$LEGACY_DESKTOP_FILE" "$ICON_FILE"
    refresh_caches
    echo "nanobot Desktop removed from $PREFIX (your workspace and ~/.nanobot are untouched)."
    exit 0
fi

if [ ! -x "$HERE/nanobot-desktop/nanobot-desktop" ]; then
    echo "error: $HERE/nanobot-desktop/nanobot-desktop is missing: run install.sh from the unpacked tarball" >&2
    exit 1
fi

mkdir -p "$PREFIX/share" "$PREFIX/bin" "$PREFIX/share/applications" "$(dirname "$ICON_FILE")"
# Copy next to the old version first, then swap, so a failed copy never leaves half an app behind.
rm -rf "$APP_DIR.new"
cp -R "$HERE/nanobot-desktop" "$APP_DIR.new"
rm -rf "$APP_DIR"
mv "$APP_DIR.new" "$APP_DIR"
# An update the app had staged would replace this version at its next start: the person chose this one.
rm -rf "$APP_DIR.pending"
ln -sfn "$APP_DIR/nanobot-desktop" "$BIN_LINK"
cp "$HERE/nanobot-desktop.svg" "$ICON_FILE"
rm -f "$LEGACY_DESKTOP_FILE"
# The menu entry runs the absolute path: ~/.local/bin is not on every desktop session's PATH.
sed -e "s|^Exec=nanobot-desktop|Exec=$APP_DIR/nanobot-desktop|" \
    -e "s|^TryExec=nanobot-desktop|TryExec=$APP_DIR/nanobot-desktop|" \
    "$HERE/io.github.nanobot_desktop.NanobotDesktop.desktop" > "$DESKTOP_FILE"
refresh_caches

echo "nanobot Desktop is installed in $APP_DIR"
echo "  menu entry: $DESKTOP_FILE"
echo "  command:    $BIN_LINK"
case ":$PATH:" in
    *":$PREFIX/bin:"*) ;;
    *) echo "  note: $PREFIX/bin is not on your PATH; add it to use 'nanobot-desktop' in a terminal" ;;
esac
