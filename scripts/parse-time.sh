#!/usr/bin/env bash
# Parse time of several fittokd builds on the same repositories, side by side in one run:
#   scripts/parse-time.sh ROUNDS FITTOKD… -- REPO…
# Each round runs `FITTOKD inspect REPO` once per build and repository, builds alternating (so a
# busy moment of the machine falls on all of them), each with an empty cache directory (a cold
# parse). Prints, per repository, each build's median parse stage in ms over the rounds and its
# difference from the first build.
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,6p "$0"; exit 2; }
rounds=$1; shift
bins=()
while [ "$1" != "--" ]; do bins+=("$(realpath "$1")"); shift; done
shift
repos=("$@")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 0; r < rounds; r++)); do
  for repo in "${repos[@]}"; do
    for i in "${!bins[@]}"; do
      cache=$(mktemp -d -p "$out")
      ms=$(FITTOK_CACHE_DIR=$cache "${bins[$i]}" inspect "$repo" 2>&1 |
        sed -n 's/.*parse \([0-9]*\) ms.*/\1/p' | head -n 1)
      echo "$ms" >> "$out/$(basename "$repo").$i"
      rm -rf "$cache"
    done
  done
done
median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '%-40s' repository
for b in "${bins[@]}"; do printf ' %22s' "$(basename "$b")"; done
echo
for repo in "${repos[@]}"; do
  printf '%-40s' "$(basename "$repo")"
  base=$(median "$out/$(basename "$repo").0")
  for i in "${!bins[@]}"; do
    m=$(median "$out/$(basename "$repo").$i")
    printf ' %14s ms %+5.1f%%' "$m" "$(awk -v m="$m" -v b="$base" 'BEGIN {print b ? 100 * (m - b) / b : 0}')"
  done
  echo
done
