#!/usr/bin/env bash
# Gather HTCondor's own submit files (the *.sub, *.submit and *.cmd files
# of src/condor_tests, src/condor_credd and src/condor_release) from a git
# clone of HTCondor into one flat directory, for the submit differential
# suite's files from outside the project:
#
#   scripts/htcondor-submit-files.sh HTCONDOR_GIT_DIR OUT_DIR [REV]
#   STARLING_SUBMIT_CORPUS=OUT_DIR cargo test -p starling-protocol \
#       --test submit -- --nocapture
#
# Each file is named by its path, `/` written `__` (src/ dropped), so
# that files of the same name in different directories stay apart.
set -euo pipefail

REPO="${1:?usage: $0 HTCONDOR_GIT_DIR OUT_DIR [REV]}"
OUT="${2:?usage: $0 HTCONDOR_GIT_DIR OUT_DIR [REV]}"
REV="${3:-HEAD}"

mkdir -p "$OUT"
count=0
while read -r mode _type hash path; do
    # Plain files only: links and submodules have nothing to read.
    case "$mode" in 100644 | 100755) ;; *) continue ;; esac
    name="${path#src/}"
    git -C "$REPO" cat-file blob "$hash" >"$OUT/${name//\//__}"
    count=$((count + 1))
done < <(git -C "$REPO" ls-tree -r "$REV" -- src/condor_tests src/condor_credd src/condor_release |
    grep -E '\.(sub|submit|cmd)$')
echo "$count files in $OUT" >&2
