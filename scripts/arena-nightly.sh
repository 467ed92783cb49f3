#!/usr/bin/env bash
# Nightly arena run for cron or systemd: load API keys, run under a time limit,
# keep arena's exit code. See docs/nightly.md.
#
# Usage: arena-nightly.sh TOURNAMENT.yaml [more `arena run` options]
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
# stdout: arena's one-line JSON summary; stderr: timestamped log lines.

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

log "start: $arena run $* (time limit $limit)"
timeout --preserve-status --signal=TERM --kill-after="$grace" "$limit" "$arena" run "$@" --json &
child=$!
# systemctl stop, kill or Ctrl-C reach arena (through timeout), which stops cleanly;
# then wait again for its real exit code.
forward() { kill -s "$1" "$child" 2>/dev/null || true; }
trap 'forward TERM' TERM
trap 'forward INT' INT
trap 'forward HUP' HUP
wait "$child"
rc=$?
while kill -0 "$child" 2>/dev/null; do
    wait "$child"
    rc=$?
done
log "exit code $rc"
exit "$rc"
