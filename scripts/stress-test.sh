#!/usr/bin/env bash
# Runs one test target many times in a row while other processes keep the
# CPUs busy, and counts the runs that failed: a way to find a test whose
# outcome depends on how the scheduler happens to order threads. It owns
# the load it starts and stops it on exit; it never changes the tests, and
# it measures nothing (a run's time is not a result).
#
#   scripts/stress-test.sh [-n RUNS] [-c CPUS] [-l NICE] cargo PACKAGE TEST [FILTER]
#   scripts/stress-test.sh [-n RUNS] [-c CPUS] [-l NICE] node FILE
#
#   cargo offloop-engine observer       every test of crates/engine/tests/observer.rs
#   cargo offloop-engine observer open  only those whose name contains "open"
#   cargo offloop-engine lib            the crate's #[cfg(test)] unit tests
#   node __test__/engine/checkpoint.test.mjs   one node:test file (node --test FILE)
#
# -n  runs (default 20); -c  busy processes beside them (default 2);
# -l  their niceness (default 10: they take CPU time from the test without
#     starving everything else on the machine). The load is `stress --cpu`
# when installed (Debian: apt-get install stress), else shell busy loops.
# A cargo target is built once, then its test binary runs directly. Each
# failed run's output is kept in a directory named at the end; the script
# exits non-zero when any run failed.
set -euo pipefail

runs=20
cpus=2
niceness=10
usage() {
  sed -n "8,9p" "$0" | sed 's/^# *//' >&2
  exit 2
}
while getopts "n:c:l:h" opt; do
  case "$opt" in
    n) runs=$OPTARG ;;
    c) cpus=$OPTARG ;;
    l) niceness=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
kind=$1
shift

cd "$(dirname "$0")/.."
root=$PWD

case "$kind" in
  cargo)
    [ $# -ge 2 ] && [ $# -le 3 ] || usage
    package=$1 test=$2 filter=${3:-}
    if [ "$test" = lib ]; then selector=(--lib); else selector=(--test "$test"); fi
    # The path of the test binary, from cargo's own report of what it built.
    binary=$(cargo test -p "$package" "${selector[@]}" --no-run --message-format=json 2>/dev/null |
      node -e '
        const lines = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean);
        const built = lines.map((l) => JSON.parse(l)).filter((m) => m.reason === "compiler-artifact" && m.profile?.test && m.executable);
        if (built.length !== 1) process.exit(1);
        console.log(built[0].executable);
      ') || {
      echo "could not build the test binary: cargo test -p $package ${selector[*]} --no-run" >&2
      exit 1
    }
    # Cargo runs test binaries from the package's folder; so does this.
    manifest=$(cargo metadata --format-version 1 --no-deps |
      node -e '
        const m = JSON.parse(require("fs").readFileSync(0, "utf8"));
        const p = m.packages.find((p) => p.name === process.argv[1]);
        if (!p) process.exit(1);
        console.log(require("path").dirname(p.manifest_path));
      ' "$package")
    run_once() { (cd "$manifest" && "$binary" ${filter:+"$filter"}); }
    label="cargo $package $test${filter:+ $filter}"
    ;;
  node)
    [ $# -eq 1 ] || usage
    file=$1
    [ -f "$file" ] || { echo "no such test file: $file" >&2; exit 1; }
    run_once() { node --test "$file"; }
    label="node $file"
    ;;
  *) usage ;;
esac

load=()
stop_load() {
  for pid in "${load[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${load[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_load EXIT
if command -v stress >/dev/null; then
  nice -n "$niceness" stress --cpu "$cpus" >/dev/null 2>&1 &
  load+=($!)
  how="stress --cpu $cpus"
else
  for _ in $(seq "$cpus"); do
    nice -n "$niceness" sh -c 'while :; do :; done' &
    load+=($!)
  done
  how="$cpus busy loops"
fi

logs=$(mktemp -d -t stress-test.XXXXXX)
failed=0
for i in $(seq "$runs"); do
  if run_once >"$logs/run-$i.log" 2>&1; then
    rm "$logs/run-$i.log"
  else
    failed=$((failed + 1))
    echo "run $i of $runs failed: $logs/run-$i.log" >&2
  fi
done
echo "$label: $runs runs under $how (nice $niceness), $failed failed"
if [ "$failed" -eq 0 ]; then
  rmdir "$logs"
else
  echo "logs of the failed runs: $logs" >&2
  exit 1
fi
