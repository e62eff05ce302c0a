#!/usr/bin/env bash
# Drains a member (moves every shard off it), then waits until it owns none:
# after this it can be stopped without any shard waiting for a lease to expire.
set -euo pipefail

usage() {
  cat >&2 <<'USAGE'
usage: drain-and-wait.sh MEMBER [--address HOST:PORT] [--timeout SECONDS] [--interval SECONDS]
       drain-and-wait.sh MEMBER --undo [--address HOST:PORT]

  Drains MEMBER (`timelane ops drain`), then polls `timelane ops shards --json`
  until MEMBER owns 0 shards. --undo takes the member back into the assignment.
  --address defaults to $TIMELANE_ADDRESS or 127.0.0.1:7070; --timeout to 300,
  --interval to 1. Exits 0 when drained, 1 on error or timeout.
USAGE
  exit 2
}

# shellcheck source=ops/scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

member=""
timeout=300
interval=1
undo=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --address) [[ $# -ge 2 ]] || usage; export TIMELANE_ADDRESS="$2"; shift 2 ;;
    --timeout) [[ $# -ge 2 ]] || usage; timeout="$2"; shift 2 ;;
    --interval) [[ $# -ge 2 ]] || usage; interval="$2"; shift 2 ;;
    --undo) undo="--undo"; shift ;;
    -h|--help) usage ;;
    -*) echo "unknown option: $1" >&2; usage ;;
    *) [[ -z "$member" ]] || usage; member="$1"; shift ;;
  esac
done
[[ -n "$member" ]] || usage
[[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout: expected whole seconds, got \"$timeout\""

# 0: every move landed; 3: accepted, still moving (we wait below); else: failed.
rc=0
timelane ops drain "$member" ${undo:+"$undo"} || rc=$?
if [[ $rc -ne 0 && $rc -ne 3 ]]; then
  die "timelane ops drain $member failed (exit $rc)"
fi

if [[ -n "$undo" ]]; then
  log "$member is back in the assignment"
  exit 0
fi

deadline=$(( $(date +%s) + timeout ))
last=""
while :; do
  if ! shards=$(timelane ops shards --json --no-fanout); then
    (( $(date +%s) < deadline )) || die "cannot list shards"
    log "cannot list shards; retrying"
    sleep "$interval"
    continue
  fi
  owned=$(shard_count owned "$member" <<<"$shards")
  if [[ "$owned" == "0" ]]; then
    log "$member owns no shards: safe to stop"
    exit 0
  fi
  if [[ "$owned" != "$last" ]]; then
    log "$member still owns $owned shard(s)…"
    last="$owned"
  fi
  if (( $(date +%s) >= deadline )); then
    die "$member still owns $owned shard(s) after ${timeout}s (see \`timelane ops shards\` and the daemons' logs)"
  fi
  sleep "$interval"
done
