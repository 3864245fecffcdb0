/* gpk::mpi: what every distributed call shares (errors agreed across ranks). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "mpi_internal.h"
#ifdef GPK_HAVE_NCCL
#include "nccl_loader.h"
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int gpk_mpi_have_nccl(void)
{
#ifdef GPK_HAVE_NCCL
    return gpk__nccl_load() == NULL; /* opened at run time (nccl_loader.h) */
#else
    return 0;
#endif
}

gpk_status gpk__mpi_fail(gpk_ctx *ctx, gpk_status s, const char *fmt, ...)
{
    if (!ctx) return s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err, GPK_ERRLEN, fmt, ap);
    va_end(ap);
    return s;
}

gpk_status gpk__mpi_check(gpk_ctx *ctx, int mpi_rc, const char *what)
{
    if (mpi_rc == MPI_SUCCESS) return GPK_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", mpi_rc);
    return gpk__mpi_fail(ctx, GPK_EDEVICE, "%s: MPI failed: %s", what, text);
}

gpk_status gpk__mpi_agree(MPI_Comm comm, gpk_ctx *ctx, gpk_status mine, const char *what)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    struct {
        int status, rank;
    } in = {(int)mine, rank}, worst;
    gpk_status s = gpk__mpi_allreduce(comm, ctx, &in, &worst, 1, MPI_2INT, MPI_MAXLOC, what);
    if (s != GPK_OK) return s;
    if (worst.status == GPK_OK || mine != GPK_OK) return mine;
    return gpk__mpi_fail(ctx, (gpk_status)worst.status, "%s: rank %d failed (%s)", what, worst.rank,
                         gpk_status_string((gpk_status)worst.status));
}

/* ---- bounded waits ------------------------------------------------------------------
 *
 * The timeout is an attribute of the communicator (milliseconds in the
 * attribute's pointer value, so MPI_COMM_DUP_FN copies it and nothing is
 * allocated); absent: the default. A wait polls its requests: busily while
 * they may complete soon (as MPI_Wait does), then with short sleeps. Every
 * poll answers the roll calls of other ranks on comm, so that a rank that
 * times out learns which ranks still answer: those are waiting too, the
 * others are the silent ones. */

#define ROLL_TAG 0x6770     /* "are you there?" */
#define ROLL_ACK_TAG 0x6771 /* "here" */
#define BUSY_POLL_S 1.0     /* polls without sleeping for this long without progress */
#define POLL_PAUSE_NS 1000000L

static int timeout_keyval = MPI_KEYVAL_INVALID;

gpk_status gpk_mpi_set_timeout(MPI_Comm comm, double seconds)
{
    if (!(seconds >= 0 && seconds <= 1e6)) return GPK_EINVAL;
    if (timeout_keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &timeout_keyval, NULL) !=
            MPI_SUCCESS)
        return GPK_EDEVICE;
    const intptr_t ms = (intptr_t)(seconds * 1e3 + 0.5);
    return MPI_Comm_set_attr(comm, timeout_keyval, (void *)ms) == MPI_SUCCESS ? GPK_OK : GPK_EDEVICE;
}

double gpk_mpi_timeout(MPI_Comm comm)
{
    void *v = NULL;
    int found = 0;
    if (timeout_keyval == MPI_KEYVAL_INVALID ||
        MPI_Comm_get_attr(comm, timeout_keyval, &v, &found) != MPI_SUCCESS || !found)
        return GPK_MPI_TIMEOUT_DEFAULT;
    return (double)(intptr_t)v * 1e-3;
}

/* Answers the roll calls waiting on comm. */
static void answer_roll_calls(MPI_Comm comm)
{
    static const int here = 1;
    for (;;) {
        int flag = 0, token;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, ROLL_TAG, comm, &flag, &st) != MPI_SUCCESS || !flag) return;
        if (MPI_Recv(&token, 1, MPI_INT, st.MPI_SOURCE, ROLL_TAG, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return;
        MPI_Request r;
        if (MPI_Isend(&here, 1, MPI_INT, st.MPI_SOURCE, ROLL_ACK_TAG, comm, &r) == MPI_SUCCESS)
            MPI_Request_free(&r);
    }
}

static void pause_poll(void)
{
    struct timespec t = {0, POLL_PAUSE_NS};
    nanosleep(&t, NULL);
}

/* Appends rank r to the list in buf. */
static void list_rank(char *buf, size_t len, int *listed, int r)
{
    const size_t at = strlen(buf);
    if (*listed < 8) snprintf(buf + at, len - at, "%s%d", *listed ? ", " : "", r);
    else if (*listed == 8) snprintf(buf + at, len - at, ", ...");
    ++*listed;
}

/* The ranks that did not answer: the peers of the requests still pending,
 * else those that answer no roll call within `grace` seconds. */
static void silent_ranks(MPI_Comm comm, int count, const MPI_Request *reqs, const int *peers, double grace,
                         char *buf, size_t len, int *listed)
{
    int P = 1, me = 0;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    buf[0] = '\0';
    *listed = 0;
    char *seen = calloc((size_t)P, 1);
    if (!seen) return;
    if (peers) {
        for (int i = 0; i < count; i++)
            if (reqs[i] != MPI_REQUEST_NULL && peers[i] >= 0 && peers[i] < P && !seen[peers[i]]) {
                seen[peers[i]] = 1;
                list_rank(buf, len, listed, peers[i]);
            }
        free(seen);
        return;
    }
    static const int ask = 1;
    for (int r = 0; r < P; r++) {
        MPI_Request q;
        if (r != me && MPI_Isend(&ask, 1, MPI_INT, r, ROLL_TAG, comm, &q) == MPI_SUCCESS)
            MPI_Request_free(&q);
    }
    seen[me] = 1;
    const double until = MPI_Wtime() + grace;
    while (MPI_Wtime() < until) {
        answer_roll_calls(comm);
        int flag = 0, token;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, ROLL_ACK_TAG, comm, &flag, &st) == MPI_SUCCESS && flag &&
            MPI_Recv(&token, 1, MPI_INT, st.MPI_SOURCE, ROLL_ACK_TAG, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS)
            seen[st.MPI_SOURCE] = 1;
        else pause_poll();
    }
    for (int r = 0; r < P; r++)
        if (!seen[r]) list_rank(buf, len, listed, r);
    free(seen);
}

gpk_status gpk__mpi_wait_msg(MPI_Comm comm, int count, MPI_Request *reqs, const int *peers, const char *what,
                             char *msg, size_t len)
{
    const double limit = gpk_mpi_timeout(comm);
    double last = MPI_Wtime();
    for (;;) {
        int pending = 0, progressed = 0;
        for (int i = 0; i < count; i++) {
            if (reqs[i] == MPI_REQUEST_NULL) continue;
            int flag = 0;
            const int rc = MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                char text[MPI_MAX_ERROR_STRING];
                int tl = 0;
                if (MPI_Error_string(rc, text, &tl) != MPI_SUCCESS)
                    snprintf(text, sizeof text, "error %d", rc);
                if (msg) snprintf(msg, len, "%s: MPI failed: %s", what, text);
                return GPK_EDEVICE;
            }
            if (flag) progressed = 1;
            else pending++;
        }
        if (!pending) return GPK_OK;
        const double now = MPI_Wtime();
        if (progressed) last = now;
        answer_roll_calls(comm);
        if (limit > 0 && now - last >= limit) {
            char ranks[96];
            int listed = 0;
            silent_ranks(comm, count, reqs, peers, limit < 2.0 ? limit : 2.0, ranks, sizeof ranks, &listed);
            if (msg) {
                if (listed)
                    snprintf(msg, len,
                             "%s: no progress for %g s: rank%s %s did not answer (stopped, hung or far "
                             "behind); the job cannot go on (the bound is the communicator's timeout, "
                             "gpk_mpi_set_timeout)",
                             what, limit, listed > 1 ? "s" : "", ranks);
                else
                    snprintf(msg, len,
                             "%s: no progress for %g s, though every rank answers: the ranks wait in "
                             "different calls; the job cannot go on",
                             what, limit);
            }
            return GPK_EIO;
        }
        if (now - last >= BUSY_POLL_S) pause_poll();
    }
}

gpk_status gpk_mpi_wait(MPI_Comm comm, int count, MPI_Request *reqs, const int *peers, const char *what,
                        char *msg, size_t len)
{
    if (count < 0 || (count && !reqs)) {
        if (msg && len) snprintf(msg, len, "gpk_mpi_wait: bad requests");
        return GPK_EINVAL;
    }
    return gpk__mpi_wait_msg(comm, count, reqs, peers, what ? what : "gpk_mpi_wait", msg, len);
}

/* The collectives of gpk::mpi, bounded: the nonblocking form, then the wait. */
static gpk_status started(MPI_Comm comm, gpk_ctx *ctx, int rc, MPI_Request *req, const char *what)
{
    gpk_status s = gpk__mpi_check(ctx, rc, what);
    if (s != GPK_OK) return s;
    char msg[GPK_ERRLEN];
    s = gpk__mpi_wait_msg(comm, 1, req, NULL, what, msg, sizeof msg);
    return s == GPK_OK ? s : gpk__mpi_fail(ctx, s, "%s", msg);
}

gpk_status gpk__mpi_allreduce(MPI_Comm comm, gpk_ctx *ctx, const void *in, void *out, int n, MPI_Datatype t,
                              MPI_Op op, const char *what)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return started(comm, ctx, MPI_Iallreduce(in, out, n, t, op, comm, &r), &r, what);
}

gpk_status gpk__mpi_allgather(MPI_Comm comm, gpk_ctx *ctx, const void *in, int n, MPI_Datatype t, void *out,
                              int m, MPI_Datatype u, const char *what)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return started(comm, ctx, MPI_Iallgather(in, n, t, out, m, u, comm, &r), &r, what);
}

gpk_status gpk__mpi_alltoall(MPI_Comm comm, gpk_ctx *ctx, const void *in, int n, MPI_Datatype t, void *out,
                             int m, MPI_Datatype u, const char *what)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return started(comm, ctx, MPI_Ialltoall(in, n, t, out, m, u, comm, &r), &r, what);
}

gpk_status gpk__mpi_alltoallv(MPI_Comm comm, gpk_ctx *ctx, const void *in, const int *sc, const int *sd,
                              MPI_Datatype t, void *out, const int *rc, const int *rd, MPI_Datatype u,
                              const char *what)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return started(comm, ctx, MPI_Ialltoallv(in, sc, sd, t, out, rc, rd, u, comm, &r), &r, what);
}

gpk_status gpk__mpi_exscan(MPI_Comm comm, gpk_ctx *ctx, const void *in, void *out, int n, MPI_Datatype t,
                           MPI_Op op, const char *what)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return started(comm, ctx, MPI_Iexscan(in, out, n, t, op, comm, &r), &r, what);
}

gpk_status gpk__mpi_bcast(MPI_Comm comm, gpk_ctx *ctx, void *buf, int n, MPI_Datatype t, int root,
                          const char *what)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return started(comm, ctx, MPI_Ibcast(buf, n, t, root, comm, &r), &r, what);
}

gpk_status gpk__mpi_barrier(MPI_Comm comm, gpk_ctx *ctx, const char *what)
{
    MPI_Request r = MPI_REQUEST_NULL;
    return started(comm, ctx, MPI_Ibarrier(comm, &r), &r, what);
}
