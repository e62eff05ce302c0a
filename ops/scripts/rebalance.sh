#!/usr/bin/env bash
# Drops operator moves so the balanced assignment applies again, prints the
# plan, and (unless --dry-run) waits until every shard is with its assigned member.
set -euo pipefail

usage() {
  cat >&2 <<'USAGE'
usage: rebalance.sh [--dry-run] [--address HOST:PORT] [--timeout SECONDS] [--interval SECONDS]

  Prints the planned moves and shards per member (`timelane ops rebalance`).
  Without --dry-run it executes them and polls `timelane ops shards --json`
  until no shard is moving. --address defaults to $TIMELANE_ADDRESS or
  127.0.0.1:7070; --timeout to 300, --interval to 1.
USAGE
  exit 2
}

# shellcheck source=ops/scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

dry_run=""
timeout=300
interval=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dry-run) dry_run="--dry-run"; shift ;;
    --address) [[ $# -ge 2 ]] || usage; export TIMELANE_ADDRESS="$2"; shift 2 ;;
    --timeout) [[ $# -ge 2 ]] || usage; timeout="$2"; shift 2 ;;
    --interval) [[ $# -ge 2 ]] || usage; interval="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[[ "$timeout" =~ ^[0-9]+$ ]] || die "--timeout: expected whole seconds, got \"$timeout\""

rc=0
timelane ops rebalance ${dry_run:+"$dry_run"} || rc=$?
if [[ $rc -ne 0 && $rc -ne 3 ]]; then
  die "timelane ops rebalance failed (exit $rc)"
fi
[[ -z "$dry_run" ]] || exit 0

deadline=$(( $(date +%s) + timeout ))
while :; do
  if ! shards=$(timelane ops shards --json --no-fanout); then
    (( $(date +%s) < deadline )) || die "cannot list shards"
    log "cannot list shards; retrying"
    sleep "$interval"
    continue
  fi
  moving=$(shard_count moving <<<"$shards")
  if [[ "$moving" == "0" ]]; then
    log "balanced: every shard is with its assigned member"
    exit 0
  fi
  if (( $(date +%s) >= deadline )); then
    die "$moving shard(s) still moving after ${timeout}s (see \`timelane ops shards\`)"
  fi
  log "$moving shard(s) moving…"
  sleep "$interval"
done
