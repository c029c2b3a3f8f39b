#!/usr/bin/env bash
# Runs one test tier (unit | int | e2e | all) with jest, then prints the plain summary line
# "N passed, N failed" that CI reads. e2e suites on the deployment harness run once per deployment
# (WEFT_E2E_DEPLOYMENTS, default "embedded distributed").
set -euo pipefail
cd "$(dirname "$0")/.."
# Jest needs Node 24 (it loads ESM-only packages such as kysely through require(esm)).
source scripts/ensure-toolchain.sh
# Node's on-disk compile cache, shared by jest and every Weft process the e2e suites start (dozens
# per run): a second start of the same modules skips most of their compilation (4.2 -> 2.8 s CPU
# to load the all-in-one).
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-${TMPDIR:-/tmp}/weft-node-compile-cache}"
tier="${1:-all}"; shift || true
# Optional second argument: a path regex that narrows the tier (e.g. libs/event-store).
filter=''
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then filter="$1"; shift; fi
[ "${1:-}" = "--" ] && shift
case "$tier" in
  unit) pattern='\.unit\.spec\.ts$' ;;
  int) pattern='\.int\.spec\.ts$' ;;
  e2e) pattern='\.e2e\.spec\.ts$' ;;
  all) pattern='\.spec\.ts$' ;;
  *) echo "usage: run-tests.sh unit|int|e2e|all [jest args]" >&2; exit 2 ;;
esac
[ -n "$filter" ] && pattern="${filter}.*${pattern}"
if [ "$tier" != unit ]; then source scripts/ensure-test-services.sh; fi
mkdir -p .test-tmp
reports=()
pids=()
# --forceExit: a handle a suite leaks must not hang CI after its results are written.
start_jest() { # <report name> <path regex> [jest args]: runs in the background; `wait_all` collects it
  local report=".test-tmp/jest-$1-$$.json" regex="$2"; shift 2
  reports+=("$report")
  NODE_OPTIONS="--experimental-vm-modules --no-warnings ${NODE_OPTIONS:-}" \
    node node_modules/jest/bin/jest.js --testPathPatterns "$regex" --json --outputFile "$report" --forceExit "$@" &
  pids+=($!)
}
status=0
wait_all() { for pid in "${pids[@]}"; do wait "$pid" || status=$?; done; }
# HTTP-level e2e suites on the deployment harness (services/all-in-one/test/support/deployment.ts)
# run once per deployment in WEFT_E2E_DEPLOYMENTS (default: embedded, then distributed); the rest once.
deployments="${WEFT_E2E_DEPLOYMENTS:-embedded distributed}"
# Suites that need plain Weft share one deployment per jest run (test/support/shared-deployment.ts).
if [ "$tier" = e2e ] || [ "$tier" = all ]; then export WEFT_E2E_SHARED=1; fi
first="${deployments%% *}"
WEFT_E2E_DEPLOYMENT="$first" start_jest "$tier" "$pattern" "$@"
# The other deployments' passes run beside the first, one suite at a time each: most of a suite's
# time is spent waiting on processes, databases and servers, which leaves the 2-core machine room.
if [ "$tier" = e2e ] || [ "$tier" = all ]; then
  deployed=$(grep -rl --include='*.e2e.spec.ts' "support/deployment" services libs contracts 2>/dev/null \
    | grep -E "${filter:-.}" | sed 's/[.]/\\./g' | paste -sd '|' - || true)
  for deployment in ${deployments#"$first"}; do
    [ -n "$deployed" ] && WEFT_E2E_DEPLOYMENT="$deployment" start_jest "e2e-$deployment" "($deployed)\$" --maxWorkers=1 "$@"
  done
fi
wait_all
node -e '
  // A suite that fails to load runs no test: it counts as one failure, or the line would read green.
  let passed = 0, failed = 0, skipped = 0, total = 0;
  for (const file of process.argv.slice(1)) {
    const r = JSON.parse(require("fs").readFileSync(file, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests + r.numRuntimeErrorTestSuites;
    skipped += r.numPendingTests + r.numTodoTests;
    total += r.numTotalTests + r.numRuntimeErrorTestSuites;
  }
  console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
  if (total === 0) { console.error("no test ran"); process.exit(1); }
' "${reports[@]}" || status=1
exit "$status"
