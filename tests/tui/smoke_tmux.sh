#!/usr/bin/env bash
# End-to-end smoke test of the real TUI in a real terminal (tmux, 100x30):
# open the library, wait until it is ready, ask a question, wait for the cited
# answer (the final "Sources" list, not the preliminary one), check for "[1]", quit.
#
#   tests/tui/smoke_tmux.sh [FOLDER]
#
# Env: FIELDQA (command, default .venv/bin/fieldqa), FIELDQA_SMOKE_INDEX (reuse an
# index folder; default a fresh temporary one), SMOKE_READY_S (default 900),
# SMOKE_ANSWER_S (default 120), SMOKE_QUESTION.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
FOLDER="${1:-$ROOT/samples}"
FIELDQA="${FIELDQA:-$ROOT/.venv/bin/fieldqa}"
QUESTION="${SMOKE_QUESTION:-What does the Kestrel KX-7 error ERR_CACHE_STALE mean?}"
READY_S="${SMOKE_READY_S:-900}"
ANSWER_S="${SMOKE_ANSWER_S:-120}"
SESSION="fieldqa-smoke-$$"
TMP="$(mktemp -d)"
INDEX="${FIELDQA_SMOKE_INDEX:-$TMP/index}"

command -v tmux >/dev/null || { echo "smoke_tmux: tmux is not installed" >&2; exit 2; }

cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

pane() { tmux capture-pane -p -t "$SESSION" 2>/dev/null || true; }

wait_for() {  # wait_for REGEX SECONDS WHAT [FAIL_REGEX]
    local deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        if pane | grep -Eq -- "$1"; then
            return 0
        fi
        if [[ -n "${4:-}" ]] && pane | grep -Eq -- "$4"; then
            break
        fi
        sleep 0.5
    done
    echo "smoke_tmux: timed out or failed waiting for $3; the screen was:" >&2
    pane >&2
    exit 1
}

# No user config, no colour surprises; TERM for a normal xterm.
tmux new-session -d -s "$SESSION" -x 100 -y 30 \
    "env XDG_CONFIG_HOME='$TMP/config' TERM=xterm-256color '$FIELDQA' '$FOLDER' --index '$INDEX'; echo EXITED \$?; sleep 30"

wait_for "· ready ·" "$READY_S" "the ready state" "could not open|indexing failed|EXITED"
tmux send-keys -t "$SESSION" -l "$QUESTION"
wait_for "${QUESTION:0:20}" 20 "the question to be typed"
tmux send-keys -t "$SESSION" Enter
wait_for "─ (Sources|Passages to consult) ─" "$ANSWER_S" "the answer"
screen="$(pane)"
if ! grep -q -- "─ Sources ─" <<<"$screen" || ! grep -q -- "\[1\]" <<<"$screen"; then
    echo "smoke_tmux: no cited answer on screen:" >&2
    echo "$screen" >&2
    exit 1
fi
echo "$screen"
tmux send-keys -t "$SESSION" C-q
wait_for "EXITED 0" 20 "a clean exit (ctrl+q)"
echo "smoke_tmux: ok"
