# Sourced by the CLI test scripts (cli_test.sh, cli_reliability_test.sh,
# cli_mpi_test.sh): cli_workdir NAME makes a fresh work directory and
# enters it; fail / pass count the checks in FAILS and TESTS.
cli_workdir() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
    cd "$WORK" || exit 1
}
FAILS=0
TESTS=0
fail() {
    FAILS=$((FAILS + 1))
    echo "FAIL: $*" >&2
}
pass() { TESTS=$((TESTS + 1)); }
# run RC DESCRIPTION PATTERN -- command...: the command must exit RC with
# PATTERN (may be empty) on stderr; its output is left in out.txt and
# err.txt. With CLI_RUN_TIMEOUT set (seconds), a command still running
# then is killed and fails: a hang is a failure.
run() {
    want=$1 what=$2 pattern=$3
    shift 4
    if [ -n "${CLI_RUN_TIMEOUT:-}" ]; then
        timeout "$CLI_RUN_TIMEOUT" "$@" >out.txt 2>err.txt
    else
        "$@" >out.txt 2>err.txt
    fi
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, expected $want: $*"
        sed 's/^/    stderr: /' err.txt >&2
    elif [ -n "$pattern" ] && ! grep -q -- "$pattern" err.txt; then
        fail "$what: stderr lacks '$pattern':"
        sed 's/^/    stderr: /' err.txt >&2
    else
        pass
    fi
}
