#!/usr/bin/env bash
# Runs a local timelane cluster: N daemons on this machine sharing one
# PostgreSQL (DATABASE_URL) and one Redis (REDIS_URL), for trying out
# discovery, moves, drains and failover.
set -euo pipefail

usage() {
  cat >&2 <<'USAGE'
usage: local-cluster.sh N [-- DAEMON-FLAGS...]   start members a, b, c, … (N of them; running ones are kept)
       local-cluster.sh stop [MEMBER...]         stop all members (or the ones named), gracefully
       local-cluster.sh status                   show the members this folder knows

  Member k (a=0, b=1, …) listens on $HOST:$((BASE_PORT+k)) for gRPC and
  $HOST:$((METRICS_BASE_PORT+k)) for metrics; pids and logs go to $TIMELANE_CLUSTER_DIR.
  Runs `timelane migrate` first. Flags after -- go to every daemon.

  environment:
    DATABASE_URL          required
    REDIS_URL             required when N > 1
    TIMELANE_REDIS_PREFIX Redis key prefix (default timelane:)
    TIMELANE_CLUSTER_DIR  pid and log folder (default <repo>/.timelane/local-cluster)
    HOST                  default 127.0.0.1
    BASE_PORT             default 7070
    METRICS_BASE_PORT     default 9464
    TIMELANE_BIN          CLI command (default: the repo build, else `timelane` on PATH)
USAGE
  exit 2
}

# shellcheck source=ops/scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

DIR="${TIMELANE_CLUSTER_DIR:-$REPO_DIR/.timelane/local-cluster}"
HOST="${HOST:-127.0.0.1}"
BASE_PORT="${BASE_PORT:-7070}"
METRICS_BASE_PORT="${METRICS_BASE_PORT:-9464}"
LETTERS=(a b c d e f g h i j k l m n o p q r s t u v w x y z)

# The pid in $DIR/ID.pid, if that process is alive and is the daemon of member ID.
running_pid() {
  local id="$1" pid args
  [[ -f "$DIR/$id.pid" ]] || return 1
  pid="$(cat "$DIR/$id.pid")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  args="$(ps -o args= -p "$pid" 2>/dev/null)" || return 1
  [[ "$args" == *" daemon "* && "$args" == *"--member-id $id "* ]] || return 1
  echo "$pid"
}

known_members() {
  local f
  for f in "$DIR"/*.pid; do
    [[ -e "$f" ]] || continue
    basename "$f" .pid
  done
}

start() {
  local n="$1"
  shift
  [[ "$n" =~ ^[0-9]+$ ]] && (( n >= 1 && n <= 26 )) || die "N: expected 1..26, got \"$n\""
  [[ -n "${DATABASE_URL:-}" ]] || die "DATABASE_URL is not set"
  if (( n > 1 )) && [[ -z "${REDIS_URL:-}" ]]; then
    die "REDIS_URL is not set: a cluster of more than one member needs Redis"
  fi
  mkdir -p "$DIR"
  resolve_cli
  log "migrating $DATABASE_URL"
  timelane migrate --database-url "$DATABASE_URL" >&2

  local k id port mport pid started=()
  for (( k = 0; k < n; k++ )); do
    id="${LETTERS[$k]}"
    if pid="$(running_pid "$id")"; then
      log "member $id already running (pid $pid)"
      continue
    fi
    port=$(( BASE_PORT + k ))
    mport=$(( METRICS_BASE_PORT + k ))
    local redis_flags=()
    [[ -z "${REDIS_URL:-}" ]] || redis_flags=(--redis-url "$REDIS_URL")
    # A local cluster on this host runs open (TIMELANE_INSECURE), unless the
    # caller set TIMELANE_AUTH_FILE or passes --auth-file / --tls-client-ca.
    local open_env=(TIMELANE_INSECURE=1)
    [[ -z "${TIMELANE_AUTH_FILE:-}" && " $* " != *" --auth-file "* && " $* " != *" --tls-client-ca "* ]] || open_env=()
    nohup env "${open_env[@]}" "${TIMELANE_CMD[@]}" daemon \
      --database-url "$DATABASE_URL" "${redis_flags[@]}" \
      --member-id "$id" \
      --grpc-address "$HOST:$port" \
      --metrics-address "$HOST:$mport" \
      "$@" >"$DIR/$id.log" 2>&1 </dev/null &
    echo $! >"$DIR/$id.pid"
    started+=("$id")
  done

  # Wait for each new member's start line (or its early exit).
  for id in "${started[@]}"; do
    pid="$(cat "$DIR/$id.pid")"
    local deadline=$(( $(date +%s) + 30 ))
    until grep -q '"msg":"timelane daemon started"' "$DIR/$id.log" 2>/dev/null; do
      if ! kill -0 "$pid" 2>/dev/null; then
        rm -f "$DIR/$id.pid"
        tail -n 20 "$DIR/$id.log" >&2 || true
        die "member $id exited during start (log: $DIR/$id.log)"
      fi
      (( $(date +%s) < deadline )) || die "member $id did not start within 30s (log: $DIR/$id.log)"
      sleep 0.2
    done
    log "member $id started (pid $pid)"
  done
  status
  echo
  echo "try:  TIMELANE_ADDRESS=$HOST:$BASE_PORT ${TIMELANE_CMD[*]} ops shards"
  echo "      ${TIMELANE_CMD[*]} worker --discover --address $HOST:$BASE_PORT --queue demo"
  echo "stop: $0 stop"
}

stop() {
  local ids=("$@") id pid waiting=()
  [[ ${#ids[@]} -gt 0 ]] || mapfile -t ids < <(known_members)
  if [[ ${#ids[@]} -eq 0 ]]; then
    log "nothing to stop (no pid files in $DIR)"
    return 0
  fi
  for id in "${ids[@]}"; do
    if pid="$(running_pid "$id")"; then
      kill -TERM "$pid"
      waiting+=("$id:$pid")
    else
      log "member $id is not running"
      rm -f "$DIR/$id.pid"
    fi
  done
  local entry deadline=$(( $(date +%s) + 20 ))
  for entry in "${waiting[@]}"; do
    id="${entry%%:*}"
    pid="${entry#*:}"
    while kill -0 "$pid" 2>/dev/null; do
      if (( $(date +%s) >= deadline )); then
        log "member $id (pid $pid) still running after 20s: killing it"
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.2
    done
    rm -f "$DIR/$id.pid"
    log "member $id stopped"
  done
}

status() {
  local id pid k found=0
  printf '%-7s %-8s %-22s %-22s %s\n' MEMBER PID GRPC METRICS LOG
  for (( k = 0; k < 26; k++ )); do
    id="${LETTERS[$k]}"
    [[ -f "$DIR/$id.pid" ]] || continue
    found=1
    if pid="$(running_pid "$id")"; then :; else pid="(dead)"; fi
    printf '%-7s %-8s %-22s %-22s %s\n' "$id" "$pid" "$HOST:$(( BASE_PORT + k ))" "$HOST:$(( METRICS_BASE_PORT + k ))" "$DIR/$id.log"
  done
  (( found )) || echo "(no members in $DIR)"
}

[[ $# -ge 1 ]] || usage
case "$1" in
  stop) shift; stop "$@" ;;
  status) shift; [[ $# -eq 0 ]] || usage; status ;;
  -h|--help) usage ;;
  *)
    n="$1"
    shift
    if [[ $# -gt 0 ]]; then
      [[ "$1" == "--" ]] || usage
      shift
    fi
    start "$n" "$@"
    ;;
esac
