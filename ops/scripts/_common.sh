# Shared helpers of the ops scripts (sourced, not run).
#
# The CLI is, in order: $TIMELANE_BIN (a command line, e.g. "npx timelane"),
# the build next to these scripts (../../dist/clients/cli/cli.js, run with node),
# or `timelane` on PATH.

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/../.." && pwd)"

# Sets TIMELANE_CMD (an array: the command that runs the CLI).
resolve_cli() {
  if [[ -n "${TIMELANE_BIN:-}" ]]; then
    # shellcheck disable=SC2206 # TIMELANE_BIN may hold a command and its arguments
    TIMELANE_CMD=($TIMELANE_BIN)
  elif [[ -f "$REPO_DIR/dist/clients/cli/cli.js" ]]; then
    TIMELANE_CMD=(node "$REPO_DIR/dist/clients/cli/cli.js")
  elif command -v timelane >/dev/null 2>&1; then
    TIMELANE_CMD=("$(command -v timelane)")
  else
    echo "error: timelane CLI not found: set TIMELANE_BIN, run \`npm run build\`, or install timelane" >&2
    return 127
  fi
}

timelane() {
  [[ ${#TIMELANE_CMD[@]} -gt 0 ]] || resolve_cli
  "${TIMELANE_CMD[@]}" "$@"
}

TIMELANE_CMD=()

die() {
  echo "error: $*" >&2
  exit 1
}

log() {
  echo "[$(date +%H:%M:%S)] $*" >&2
}

# Reads `ops shards --json` on stdin; prints one value, by name:
#   owned MEMBER  shards owned by MEMBER
#   moving        shards whose owner is not the assigned member
#   total         shards
shard_count() {
  node -e '
    const [what, member] = process.argv.slice(1);
    let text = "";
    process.stdin.on("data", (d) => (text += d)).on("end", () => {
      const shards = JSON.parse(text);
      const n =
        what === "owned" ? shards.filter((s) => s.owner === member).length
        : what === "moving" ? shards.filter((s) => s.assignedTo !== "" && s.owner !== s.assignedTo).length
        : shards.length;
      process.stdout.write(String(n) + "\n");
    });
  ' "$@"
}
