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
