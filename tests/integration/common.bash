# Sourced by the integration tests (tests/integration/*.sh): how a test fails, and how it checks that a
# tool refused something properly. The caller sets $work (a scratch directory) first.

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect STATUS TEXT COMMAND...: COMMAND exits with STATUS and says TEXT on stderr in one line (the
# tools' promise for every error; a usage error may add the line "Run 'TOOL --help' for usage.").
# Its stdout and stderr stay in $work/out and $work/err.
expect() {
  local want=$1 text=$2
  shift 2
  local status=0
  "$@" >"$work/out" 2>"$work/err" || status=$?
  [[ $status -eq $want ]] || fail "$*: exit status $status, expected $want: $(cat "$work/err")"
  grep -qF -- "$text" "$work/err" || fail "$*: stderr lacks '$text': $(cat "$work/err")"
  [[ $(grep -cv "^Run '[a-z-]* --help' for usage\.$" "$work/err") -eq 1 ]] ||
    fail "$*: expected one line on stderr, got: $(cat "$work/err")"
  echo "ok   exit $status: $(head -1 "$work/err")"
}

# expect_no_output [DIR]: after expect, the failed command wrote nothing on stdout and left no file in
# DIR (where it was told to write).
expect_no_output() {
  [[ ! -s "$work/out" ]] || fail "wrote to stdout on error: $(head -c 200 "$work/out")"
  if [[ $# -gt 0 && -n "$(ls -A "$1")" ]]; then fail "left files behind in $1: $(ls -A "$1")"; fi
}

# skip_trained REASON: the tests on openWakeWord's trained models skip (77) when the models or
# onnxruntime-node cannot be fetched, except under MT_REQUIRE_TRAINED_MODELS=1, where that fails.
skip_trained() {
  [[ "${MT_REQUIRE_TRAINED_MODELS:-0}" != 1 ]] || fail "$* (MT_REQUIRE_TRAINED_MODELS=1)"
  echo "SKIP: $*"
  exit 77
}
