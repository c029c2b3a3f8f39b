#!/usr/bin/env bash
# Runs one test tier (unit | int | e2e | all) with jest, then prints the plain summary line
# "N passed, N failed" that CI reads.
set -euo pipefail
cd "$(dirname "$0")/.."
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
report=".test-tmp/jest-$tier-$$.json"
status=0
NODE_OPTIONS="--experimental-vm-modules --no-warnings ${NODE_OPTIONS:-}" \
  node node_modules/jest/bin/jest.js --testPathPatterns "$pattern" --json --outputFile "$report" "$@" || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
  if (r.numTotalTests === 0) { console.error("no test ran"); process.exit(1); }
' "$report" || status=1
exit "$status"
