#!/usr/bin/env bash
# The performance table of docs/performance.md, measured: whole-process timings with hyperfine (the minimum of
# several runs, since the machine may be shared), check --json's per-entry figures, and the
# in-process rows of the bench_report example (states/s against the two-phase-commit baseline,
# bytes per state, simulator attempts/s). Prints markdown on stdout.
#
#   benches/report.sh            # from the repository root
#
# Needs hyperfine (Debian: apt-get install hyperfine) and jq. Honours CARGO_TARGET_DIR.
set -euo pipefail

cd "$(dirname "$0")/.."
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

# hyperfine's minimum and mean wall time and mean CPU time (user + system), in milliseconds.
time_ms() {
  local runs="$1" name="$2"
  shift 2
  if ! hyperfine --style none -N --warmup 2 --runs "$runs" --export-json "$scratch/$name.json" "$@" \
    >/dev/null 2>"$scratch/$name.err"; then
    echo "report.sh: hyperfine failed on: $*" >&2
    cat "$scratch/$name.err" >&2
    return 1
  fi
  jq -r '.results[0] | "\(.min * 1000) \(.mean * 1000) \((.user + .system) * 1000)"' "$scratch/$name.json"
}

fmt_ms() { awk -v min="$1" -v mean="$2" -v cpu="$3" -v n="$4" 'BEGIN { printf "%.1f ms (min of %d; mean %.1f; CPU %.1f)", min, n, mean, cpu }'; }
fmt_s() { awk -v min="$1" -v mean="$2" -v cpu="$3" -v n="$4" 'BEGIN { printf "%.2f s (min of %d; mean %.2f; CPU %.2f)", min / 1000, n, mean / 1000, cpu / 1000 }'; }

cores="$(nproc)"
cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
mem="$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
load="$(cut -d' ' -f1 /proc/loadavg)"
rustc_version="$(rustc --version | cut -d' ' -f2)"

one_config="olake-bootstrap:master --faults none --bound server=primary"
olake_times="$(time_ms 30 olake "$walcheck check olake-bootstrap:master $out")"
read -r olake_min olake_mean olake_cpu <<<"$olake_times"
one_times="$(time_ms 30 one "$walcheck check $one_config $out")"
read -r one_min one_mean one_cpu <<<"$one_times"
full_times="$(time_ms 5 full "$walcheck check $out")"
read -r full_min full_mean full_cpu <<<"$full_times"
full2_times="$(time_ms 5 full2 "$walcheck check --threads 2 $out")"
read -r full2_min full2_mean full2_cpu <<<"$full2_times"
# The previous engine, side by side in the same run: one search per check, states stored whole.
olake_ref_times="$(time_ms 30 olake_ref "$walcheck check olake-bootstrap:master --engine reference $out")"
read -r olake_ref_min olake_ref_mean olake_ref_cpu <<<"$olake_ref_times"
full_ref_times="$(time_ms 5 full_ref "$walcheck check --engine reference $out")"
read -r full_ref_min full_ref_mean full_ref_cpu <<<"$full_ref_times"
median_ms() { jq -r '.results[0].median * 1000' "$scratch/$1.json"; }
olake_median="$(median_ms olake)"
olake_ref_median="$(median_ms olake_ref)"

"$walcheck" check --json $out > "$scratch/check.json"
"$walcheck" list --json > "$scratch/list.json"
checks="$(jq '.results | length' "$scratch/check.json")"
olake_checks="$("$walcheck" check olake-bootstrap:master --json $out | jq '.results | length')"
one_checks="$("$walcheck" check $one_config --json $out | jq '.results | length')"
rss_mb="$(jq '.peak_rss_bytes / 1000000 | floor' "$scratch/check.json")"
# The holding entry that stores the most states, named with its non-default bounds, and its
# figures from check --json.
largest="$(jq -r --slurpfile list "$scratch/list.json" '
  ($list[0].systems | map({key: .name, value: (.bounds | map({key: .name, value: .default}) | from_entries)}) | from_entries) as $defaults
  | [.results[] | select(.verdict == "holds" and .kind == "always")] | max_by(.unique_states)
  | (.system as $s | .bounds | to_entries | map(select(.value != $defaults[$s][.key])) | map("\(.key)=\(.value)") | join(",")) as $bounds
  | "\(.system):\(.variant) faults=\(.faults) \($bounds) \(.property), \(.unique_states) states|\(.states_per_s)|\(.bytes_per_state)|\(.peak_heap_bytes / 100000 | floor / 10)"' "$scratch/check.json")"
IFS='|' read -r largest_name largest_rate largest_bytes largest_heap_mb <<<"$largest"
# Instructions are not disturbed by other load on the machine.
instructions="-"
if command -v valgrind >/dev/null; then
  valgrind --tool=callgrind --callgrind-out-file="$scratch/callgrind.out" "$walcheck" check olake-bootstrap:master $out \
    >/dev/null 2>"$scratch/callgrind.err"
  instructions="$(awk '/I +refs:/ { gsub(",", "", $NF); printf "%.1f million", $NF / 1e6 }' "$scratch/callgrind.err")"
fi

echo "Measured on $cores cores ($cpu), $mem of memory, rustc $rustc_version, load average $load at the start, $(date -u +%Y-%m-%d)."
echo
echo "| figure | value | goal | command |"
echo "|---|---|---|---|"
echo "| OLake counterexample as a whole process, all $olake_checks checks of the variant | $(fmt_ms "$olake_min" "$olake_mean" "$olake_cpu" 30) | <= 5 ms | \`hyperfine -N 'walcheck check olake-bootstrap:master'\` |"
echo "| the same, median of 30, compact / reference engine | $(awk -v a="$olake_median" -v b="$olake_ref_median" 'BEGIN { printf "%.1f / %.1f ms", a, b }') | <= 10 ms | \`hyperfine -N 'walcheck check olake-bootstrap:master [--engine reference]'\` |"
echo "| the same, instructions executed | $instructions | - | \`valgrind --tool=callgrind walcheck check olake-bootstrap:master\` |"
echo "| OLake counterexample as a whole process, one configuration ($one_checks checks) | $(fmt_ms "$one_min" "$one_mean" "$one_cpu" 30) | <= 5 ms | \`hyperfine -N 'walcheck check $one_config'\` |"
echo "| full catalogue ($checks checks), 1 thread | $(fmt_s "$full_min" "$full_mean" "$full_cpu" 5) | <= 10 s | \`hyperfine -N 'walcheck check'\` |"
echo "| full catalogue, 1 thread, reference engine | $(fmt_s "$full_ref_min" "$full_ref_mean" "$full_ref_cpu" 5) | compact no slower | \`hyperfine -N 'walcheck check --engine reference'\` |"
echo "| full catalogue, 2 threads | $(fmt_s "$full2_min" "$full2_mean" "$full2_cpu" 5) | <= 10 s | \`hyperfine -N 'walcheck check --threads 2'\` |"
echo "| peak RSS, full catalogue | $rss_mb MB | - | \`walcheck check --json\`: \`peak_rss_bytes\` |"
echo "| largest holding entry ($largest_name): states/s, heap bytes per state, peak heap | $largest_rate; $largest_bytes B; $largest_heap_mb MB | - | \`walcheck check --json\`: \`states_per_s\`, \`bytes_per_state\`, \`peak_heap_bytes\` |"
"$target/examples/bench_report"
