#!/usr/bin/env bash
# The README's performance table, measured: whole-process timings with hyperfine (the minimum of
# several runs, since the machine may be shared), check --json's per-entry figures, and the
# in-process rows of the bench_report example (states/s against the two-phase-commit baseline,
# bytes per state, simulator attempts/s). Prints markdown on stdout.
#
#   properties/benches/report.sh            # from the repository root
#
# Needs hyperfine (Debian: apt-get install hyperfine) and jq. Honours CARGO_TARGET_DIR.
set -euo pipefail

cd "$(dirname "$0")/../.."
for tool in hyperfine jq; do
  command -v "$tool" >/dev/null || { echo "report.sh: needs $tool (apt-get install $tool)" >&2; exit 2; }
done

cargo build --quiet --release -p walcheck --bin walcheck --example bench_report
target="${CARGO_TARGET_DIR:-target}/release"
walcheck="$target/walcheck"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# Counterexamples go to a scratch directory, not traces/out: the runs are the same otherwise.
out="--out $scratch/traces"

# hyperfine's minimum and mean, in milliseconds, of one command.
time_ms() {
  local runs="$1" name="$2"
  shift 2
  hyperfine --style none -N --warmup 2 --runs "$runs" --export-json "$scratch/$name.json" "$@" >/dev/null 2>&1
  jq -r '.results[0] | "\(.min * 1000) \(.mean * 1000)"' "$scratch/$name.json"
}

fmt_ms() { awk -v min="$1" -v mean="$2" -v n="$3" 'BEGIN { printf "%.1f ms (min of %d; mean %.1f)", min, n, mean }'; }
fmt_s() { awk -v min="$1" -v mean="$2" -v n="$3" 'BEGIN { printf "%.2f s (min of %d; mean %.2f)", min / 1000, n, mean / 1000 }'; }

cores="$(nproc)"
cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
mem="$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
load="$(cut -d' ' -f1 /proc/loadavg)"
rustc_version="$(rustc --version | cut -d' ' -f2)"

read -r olake_min olake_mean < <(time_ms 30 olake "$walcheck check olake-bootstrap:master $out")
read -r one_min one_mean < <(time_ms 30 one "$walcheck check olake-bootstrap:master --faults none --bound server=primary $out")
read -r full_min full_mean < <(time_ms 5 full "$walcheck check $out")
read -r full2_min full2_mean < <(time_ms 5 full2 "$walcheck check --threads 2 $out")

"$walcheck" check --json $out > "$scratch/check.json"
checks="$(jq '.results | length' "$scratch/check.json")"
olake_checks="$("$walcheck" check olake-bootstrap:master --json $out | jq '.results | length')"
rss_mb="$(jq '.peak_rss_bytes / 1000000 | floor' "$scratch/check.json")"
# The holding entry that stores the most states, and its figures from check --json.
largest="$(jq -r '[.results[] | select(.verdict == "holds" and .kind == "always")] | max_by(.unique_states)
  | "\(.system):\(.variant) faults=\(.faults) \(.property), \(.unique_states) states|\(.states_per_s)|\(.bytes_per_state)|\(.peak_heap_bytes / 1000000 * 10 | floor / 10)"' "$scratch/check.json")"
IFS='|' read -r largest_name largest_rate largest_bytes largest_heap_mb <<<"$largest"

echo "Measured on $cores cores ($cpu), $mem of memory, rustc $rustc_version, load average $load at the start, $(date -u +%Y-%m-%d)."
echo
echo "| figure | value | goal | command |"
echo "|---|---|---|---|"
echo "| OLake counterexample as a whole process, all $olake_checks checks of the variant | $(fmt_ms "$olake_min" "$olake_mean" 30) | <= 5 ms | \`hyperfine -N 'walcheck check olake-bootstrap:master'\` |"
echo "| OLake counterexample as a whole process, one configuration (6 checks) | $(fmt_ms "$one_min" "$one_mean" 30) | <= 5 ms | \`hyperfine -N 'walcheck check olake-bootstrap:master --faults none --bound server=primary'\` |"
echo "| full catalogue ($checks checks), 1 thread | $(fmt_s "$full_min" "$full_mean" 5) | <= 10 s | \`hyperfine -N 'walcheck check'\` |"
echo "| full catalogue, 2 threads | $(fmt_s "$full2_min" "$full2_mean" 5) | <= 10 s | \`hyperfine -N 'walcheck check --threads 2'\` |"
echo "| peak RSS, full catalogue | $rss_mb MB | - | \`walcheck check --json\`: \`peak_rss_bytes\` |"
echo "| largest holding entry ($largest_name): states/s, heap bytes per state, peak heap | $largest_rate; $largest_bytes B; $largest_heap_mb MB | - | \`walcheck check --json\`: \`states_per_s\`, \`bytes_per_state\`, \`peak_heap_bytes\` |"
"$target/examples/bench_report"
