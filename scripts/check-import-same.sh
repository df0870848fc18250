#!/usr/bin/env bash
# scripts/check-import-same.sh OLD_LUMOS_MODEL NEW_LUMOS_MODEL: imports every shared Kineto
# trace (../shared/data/traces: the H200 runs, HTA's single-rank traces, the DLRM archive) with
# both binaries and says, per trace, whether the outputs are the same byte for byte, with each
# run's seconds and peak RSS (/usr/bin/time). For changes to modeler/import that must not change
# what is written (build the old one in a worktree: git worktree add /tmp/old BASE). Exits 1 when
# an output differs or an import fails.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1")
new=$(realpath "$2")
traces=../shared/data/traces
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/new"
status=0
for f in "$traces"/h200-pytorch/*.json.gz "$traces"/hta-single-rank/*.json.gz \
  "$traces"/dlrm-8rank-v100/dlrm_kineto.tar.gz; do
  b=$(basename "$f")
  b=${b%%.*}
  for v in old new; do
    bin=$old
    [ "$v" = new ] && bin=$new
    if ! /usr/bin/time -f "%e s %M KB" "$bin" import kineto "$f" -o "$work/$v/$b/" >/dev/null \
      2>"$work/$b.$v.time"; then
      echo "$b: the $v import failed: $(cat "$work/$b.$v.time")"
      status=1
    fi
  done
  same=same
  diff -r -q "$work/old/$b" "$work/new/$b" >/dev/null || { same=DIFFERENT; status=1; }
  echo "$b: $same; old $(tail -1 "$work/$b.old.time"), new $(tail -1 "$work/$b.new.time")"
done
exit $status
