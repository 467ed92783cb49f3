#!/usr/bin/env bash
# Nightly arena run for cron or systemd: load API keys, run under a time limit,
# keep arena's exit code. See docs/nightly.md.
#
# Usage: arena-nightly.sh TOURNAMENT.yaml [more `arena run` options]
# Run it from the tournament's directory (cron: `cd DIR && ...`; systemd:
# WorkingDirectory=), as relative output paths resolve from the current directory.
#
# Environment (all optional):
#   ARENA_ENV_FILE    KEY=value lines (API keys); default ~/.config/arena/env if it exists.
#                     Lines may be blank, comments (#) or `export KEY=value`; values may be
#                     quoted. The file is parsed, never executed.
#   ARENA_TIMEOUT     time limit of the run, as for timeout(1) (default 6h). On expiry arena
#                     gets SIGTERM, stops cleanly and exits 143 (resumable).
#   ARENA_KILL_AFTER  grace period after that SIGTERM before SIGKILL (default 5m).
#   ARENA_BIN         the arena executable (default: `arena` on PATH).
#
# Exit code: arena's own (0 complete, 2 bad input, 3 partial, 4 budget reached,
# 75 another run holds the lock, 130/143 interrupted or timed out), 137 when arena
# had to be killed after the grace period, 2 for a usage or env-file problem.
# stdout: arena's one-line JSON summary (with run_id, started_at, ended_at, pid), or, when
# arena ended without one (killed, crashed), a fallback line with the same keys and
# "source": "arena-nightly.sh"; stderr: timestamped log lines.
# Signals: TERM and INT are forwarded to arena; HUP is forwarded as TERM.
# ARENA_RUN_ID is set for arena, so its line and report file carry this night's id.

set -uo pipefail

log() { printf '[%s] arena-nightly: %s\n' "$(date +%Y-%m-%dT%H:%M:%S)" "$*" >&2; }

if [ "$#" -lt 1 ]; then
    log "usage: arena-nightly.sh TOURNAMENT.yaml [arena run options]"
    exit 2
fi

load_env_file() {
    local file=$1 line key value lineno=0
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        line=${line%$'\r'}
        case $line in '' | '#'*) continue ;; esac
        line=${line#export }
        key=${line%%=*}
        value=${line#*=}
        if [ "$key" = "$line" ] || ! [[ $key =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
            log "$file: line $lineno: expected KEY=value"
            return 1
        fi
        if [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]]; then
            value=${BASH_REMATCH[1]}
        fi
        export "$key=$value"
    done <"$file"
}

env_file=${ARENA_ENV_FILE-}
if [ -z "$env_file" ] && [ -f "${HOME:-/nonexistent}/.config/arena/env" ]; then
    env_file=$HOME/.config/arena/env
fi
if [ -n "$env_file" ]; then
    if [ ! -r "$env_file" ]; then
        log "cannot read the env file $env_file"
        exit 2
    fi
    load_env_file "$env_file" || exit 2
fi

arena=${ARENA_BIN:-arena}
limit=${ARENA_TIMEOUT:-6h}
grace=${ARENA_KILL_AFTER:-5m}

now() { date +%Y-%m-%dT%H:%M:%S%z; }
# One id for this night: arena records it in its JSON line and report file.
ARENA_RUN_ID=$(date +%Y%m%dT%H%M%S)-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
export ARENA_RUN_ID
started=$(now)
work=$(mktemp -d "${TMPDIR:-/tmp}/arena-nightly.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

log "start: $arena run $* (time limit $limit, run id $ARENA_RUN_ID)"
# arena's stdout (its one JSON line) goes to a file first, so that the wrapper can tell
# whether arena printed it; the inner shell notes arena's pid and becomes arena.
timeout --preserve-status --signal=TERM --kill-after="$grace" "$limit" \
    bash -c 'echo "$$" >"$0"; exec "$@"' "$work/pid" "$arena" run "$@" --json >"$work/out" &
child=$!
# systemctl stop, kill or Ctrl-C reach arena (through timeout), which stops cleanly;
# a hangup (terminal or ssh session gone) is passed on as SIGTERM, which arena handles.
# Then wait again for the real exit code.
forward() { kill -s "$1" "$child" 2>/dev/null || true; }
trap 'forward TERM' TERM
trap 'forward INT' INT
trap 'forward TERM' HUP
wait "$child"
rc=$?
while kill -0 "$child" 2>/dev/null; do
    wait "$child"
    rc=$?
done
cat "$work/out"
if ! grep -q '"exit_code"' "$work/out"; then
    # arena died without its summary (killed, crashed, not found): say so in its place.
    pid=$(cat "$work/pid" 2>/dev/null)
    case $pid in '' | *[!0-9]*) pid=null ;; esac
    printf '{"exit_code": %d, "error": "arena ended without a summary (exit %d)", "run_id": "%s", "command": "run", "started_at": "%s", "ended_at": "%s", "pid": %s, "wrapper_pid": %d, "output": null, "source": "arena-nightly.sh"}\n' \
        "$rc" "$rc" "$ARENA_RUN_ID" "$started" "$(now)" "$pid" "$$"
    log "arena ended without a summary; printed a fallback line"
fi
log "exit code $rc"
exit "$rc"
