/* gpk sort --mpi: the distributed sort of one key file under mpiexec.
 *
 * Every rank reads its slice of IN (raw or .npy) at its offset, the ranks
 * sort with gpk_mpi_sort_keys (balanced: rank r ends with keys
 * [r N / P, (r+1) N / P) of the order), and every rank writes its slice of
 * OUT at its global offset. OUT follows the safe-output rule: rank 0
 * checks it before any work, creates the temporary file beside it (header
 * and size), every rank writes and syncs its slice there, and rank 0
 * renames it over OUT only after every rank succeeded; otherwise rank 0
 * removes it and OUT is as it was. Every rank exits with the same status,
 * except where a rank goes silent (stopped, hung): every wait for the
 * ranks is bounded by --mpi-timeout, and a rank that times out names the
 * silent one and ends the job (cli_mpi_lost). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gpk/mpi.h"
#include "io.h"
#include "mpi_cli.h"

typedef struct mpi_args {
    const char *in, *out;
    int have_type, check, json, quiet, threads, device;
    double timeout; /* --mpi-timeout */
    gpk_type type;
    gpk_backend backend;
} mpi_args;

static int rank_, size_;

/* A message from one rank: prefixed with the rank when there are several. */
static void mpi_error(const char *msg)
{
    if (size_ > 1) cli_error("sort", "rank %d: %s", rank_, msg);
    else cli_error("sort", "%s", msg);
}

/* "--name N" (N in 0..2^20) into *dst: 1 when argv[*i] was it, 0 when not,
 * -1 on a usage error (reported). */
static int opt_count(const char *cmd, int argc, char **argv, int *i, const char *name, int *dst)
{
    const char *val;
    uint64_t v;
    int m = cli_opt_value(cmd, argc, argv, i, NULL, name, &val);
    if (m <= 0) return m;
    if (cli_parse_uint(val, 0, 1u << 20, &v) != 0) {
        cli_error(cmd, "bad value '%s' for %s", val, name);
        return -1;
    }
    *dst = (int)v;
    return 1;
}

static int parse(int argc, char **argv, mpi_args *a)
{
    const char *cmd = "sort";
    *a = (mpi_args){.backend = GPK_BACKEND_AUTO, .device = -1, .timeout = GPK_MPI_TIMEOUT_DEFAULT};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val;
        int m;
        if (cli_flag(arg, NULL, "--mpi")) continue;
        if (cli_output_flag(arg, &a->check, &a->json, &a->quiet)) continue;
        if ((m = cli_opt_value(cmd, argc, argv, &i, "-o", "--output", &val)) != 0) {
            if (m < 0) return -1;
            a->out = val;
            continue;
        }
        if ((m = cli_opt_type(cmd, argc, argv, &i, "--type", "type", &a->type)) != 0) {
            if (m < 0) return -1;
            a->have_type = 1;
            continue;
        }
        if ((m = cli_opt_backend(cmd, argc, argv, &i, &a->backend)) != 0) {
            if (m < 0) return -1;
            continue;
        }
        if ((m = cli_opt_value(cmd, argc, argv, &i, NULL, "--mpi-timeout", &val)) != 0) {
            if (m < 0) return -1;
            if (cli_mpi_timeout_value(val, &a->timeout) != 0) {
                cli_error(cmd, "bad value '%s' for --mpi-timeout (seconds, 0 to 1e6; 0: no bound)", val);
                return -1;
            }
            continue;
        }
        if ((m = opt_count(cmd, argc, argv, &i, "--threads", &a->threads)) != 0 ||
            (m = opt_count(cmd, argc, argv, &i, "--device", &a->device)) != 0) {
            if (m < 0) return -1;
            continue;
        }
        if (arg[0] == '-' && arg[1] != '\0') {
            cli_error(cmd,
                      "'%s' does not go with --mpi (it takes IN, -o, --type, --check, --json, -q, "
                      "--backend, --device, --threads, --mpi-timeout)",
                      arg);
            return -1;
        }
        if (a->in) {
            cli_error(cmd, "more than one input file ('%s' and '%s')", a->in, arg);
            return -1;
        }
        a->in = arg;
    }
    if (!a->in) {
        cli_error(cmd, "--mpi needs an input file (raw with --type, or .npy)");
        return -1;
    }
    if (strcmp(a->in, "-") == 0 || (a->out && strcmp(a->out, "-") == 0)) {
        cli_error(cmd, "--mpi reads and writes regular files, not stdin or stdout");
        return -1;
    }
    return 0;
}

/* MPI's collectives on MPI_COMM_WORLD, bounded by the timeout: a rank
 * that times out ends the job with the message (cli_mpi_wait). */
static void all_reduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op, const char *what)
{
    MPI_Request r;
    MPI_Iallreduce(in, out, n, t, op, MPI_COMM_WORLD, &r);
    cli_mpi_wait("sort", &r, what);
}

static void all_gather(const void *in, int n, MPI_Datatype t, void *out, const char *what)
{
    MPI_Request r;
    MPI_Iallgather(in, n, t, out, n, t, MPI_COMM_WORLD, &r);
    cli_mpi_wait("sort", &r, what);
}

static void bcast(void *buf, int n, MPI_Datatype t, const char *what)
{
    MPI_Request r;
    MPI_Ibcast(buf, n, t, 0, MPI_COMM_WORLD, &r);
    cli_mpi_wait("sort", &r, what);
}

static void barrier(const char *what)
{
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    cli_mpi_wait("sort", &r, what);
}

/* The order-preserving unsigned form of a key (gpk/sort.h), for --check. */
static uint64_t mapped_key(gpk_type t, const void *p, size_t i)
{
    if (gpk_type_size(t) == 4) {
        uint32_t u = ((const uint32_t *)p)[i];
        if (t == GPK_I32) return u ^ 0x80000000u;
        if (t == GPK_F32) return (uint32_t)(((u & 0x80000000u) ? ~u : (u ^ 0x80000000u)) - 0x7FFFFFu);
        return u;
    }
    uint64_t u = ((const uint64_t *)p)[i];
    if (t == GPK_I64) return u ^ 0x8000000000000000ull;
    if (t == GPK_F64)
        return ((u & 0x8000000000000000ull) ? ~u : (u ^ 0x8000000000000000ull)) - 0xFFFFFFFFFFFFFull;
    return u;
}

/* An order-free digest of a multiset of keys: sums of two mixes of each key. */
static void digest(gpk_type t, const void *keys, size_t n, uint64_t out[2])
{
    uint64_t s0 = 0, s1 = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = mapped_key(t, keys, i) + 0x9E3779B97F4A7C15ull;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        s0 += x ^ (x >> 31);
        s1 += (x >> 7) * 0xD6E8FEB86659FD93ull;
    }
    out[0] = s0, out[1] = s1;
}

/* --check: each slice in order, order across rank boundaries, the same
 * keys as the input (digests summed over ranks), the balanced sizes. NULL
 * when all holds, else why. Collective. */
static const char *check_global(gpk_type t, const void *in, size_t n_in, const void *out, size_t n_out,
                                uint64_t N, char *why, size_t len)
{
    int local_ok = 1;
    size_t bad_at = 0;
    for (size_t i = 1; i < n_out && local_ok; i++)
        if (mapped_key(t, out, i - 1) > mapped_key(t, out, i)) local_ok = 0, bad_at = i;
    uint64_t dig[4], sum[4];
    digest(t, in, n_in, dig);
    digest(t, out, n_out, dig + 2);
    all_reduce(dig, sum, 4, MPI_UINT64_T, MPI_SUM, "--check");
    uint64_t edge[3] = {n_out > 0, n_out ? mapped_key(t, out, 0) : 0,
                        n_out ? mapped_key(t, out, n_out - 1) : 0};
    uint64_t *edges = malloc(sizeof edge * (size_t)size_);
    if (!edges) return "out of memory";
    all_gather(edge, 3, MPI_UINT64_T, edges, "--check");
    int across_ok = 1, across_at = -1;
    int have_last = 0;
    uint64_t last = 0;
    for (int p = 0; p < size_; p++) {
        if (!edges[3 * p]) continue;
        if (have_last && last > edges[3 * p + 1] && across_ok) across_ok = 0, across_at = p;
        last = edges[3 * p + 2], have_last = 1;
    }
    free(edges);
    uint64_t lo =
        N / (uint64_t)size_ * (uint64_t)rank_ + N % (uint64_t)size_ * (uint64_t)rank_ / (uint64_t)size_;
    uint64_t hi = N / (uint64_t)size_ * (uint64_t)(rank_ + 1) +
        N % (uint64_t)size_ * (uint64_t)(rank_ + 1) / (uint64_t)size_;
    int sizes_ok = n_out == hi - lo;
    int oks[2] = {local_ok && sizes_ok, 0}, all[2];
    all_reduce(oks, all, 1, MPI_INT, MPI_MIN, "--check");
    if (!local_ok)
        snprintf(why, len, "rank %d: keys %zu and %zu are out of order", rank_, bad_at - 1, bad_at);
    else if (!sizes_ok)
        snprintf(why, len, "rank %d holds %zu keys, not %llu", rank_, n_out, (unsigned long long)(hi - lo));
    else if (!all[0]) snprintf(why, len, "another rank's keys are out of order or unbalanced");
    else if (!across_ok) snprintf(why, len, "rank %d's first key is below the last key before it", across_at);
    else if (sum[0] != sum[2] || sum[1] != sum[3])
        snprintf(why, len, "the output keys are not the input keys");
    else return NULL;
    return why;
}

/* Every rank's status agreed: the worst of all. */
static int agree(int rc)
{
    int all = rc;
    all_reduce(&rc, &all, 1, MPI_INT, MPI_MAX, "the ranks' statuses");
    return all;
}

/* The ranks agree on what they do: an MPMD run (mpiexec A : B) may give
 * them different options, and a rank alone with --check would wait forever
 * in the check's collectives, one with another -o would have its file never
 * written. Rank 0's options go to all; a rank whose own differ says how, the
 * others that some rank differs. Collective: CLI_OK or CLI_USAGE on every rank. */
static int options_agree(const mpi_args *ap)
{
    const mpi_args a = *ap;
    char mine[3 * PATH_MAX];
    snprintf(mine, sizeof mine, "IN %s, -o %s, --type %s, --check %s, --json %s", a.in,
             a.out ? a.out : "(none)", a.have_type ? gpk_type_name(a.type) : "(from the file)",
             a.check ? "on" : "off", a.json ? "on" : "off");
    char root[sizeof mine];
    memcpy(root, mine, sizeof mine);
    bcast(root, (int)sizeof root, MPI_CHAR, "the options");
    const int differs = strcmp(root, mine) != 0;
    if (agree(differs ? CLI_USAGE : CLI_OK) == CLI_OK) return CLI_OK;
    if (differs)
        cli_error("sort",
                  "rank %d: the ranks must be given the same IN, -o, --type, --check and --json: this "
                  "rank has %s; rank 0 has %s",
                  rank_, mine, root);
    else
        cli_error("sort",
                  "rank %d: another rank was given other IN, -o, --type, --check or --json (it says "
                  "which); nothing done",
                  rank_);
    return CLI_USAGE;
}

/* This rank's context, one GPU per rank of a node unless --device: the
 * rank among those of its node, round robin where a node has more ranks
 * than GPUs. Collective (the node communicator's split): a rank that failed
 * before (ok 0) takes part and makes no context. */
static int rank_context(const mpi_args *a, int ok, gpk_ctx **ctx, char *msg, size_t msglen)
{
    int local = 0;
    if (a->device < 0) {
        MPI_Comm node;
        barrier("the ranks of each node"); /* the split waits without bound */
        if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS) {
            MPI_Comm_rank(node, &local);
            MPI_Comm_free(&node);
        }
    }
    if (!ok) return CLI_OK;
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    o.backend = a->backend;
    o.threads = a->threads;
    o.device = a->device;
    if (a->device < 0) {
        const int count = gpk_device_count(a->backend);
        o.device = getenv("GPK_DEVICE") ? -1 : count > 0 ? local % count : local;
    }
    if (gpk_ctx_create_ex(ctx, &o) == GPK_OK) return CLI_OK;
    snprintf(msg, msglen, "cannot create a %s context: %s", gpk_backend_name(a->backend),
             gpk_last_error(NULL));
    return CLI_FAIL;
}

/* Rank 0's output file: the header and the size, so every rank can write
 * its slice at *offset. */
static int open_output(const char *path, const io_array *arr, io_out *out, long long *offset, char *msg,
                       size_t msglen)
{
    char err[600];
    io_map map;
    io_format fmt = io_output_format(path, arr->format);
    if (io_out_open_named(out, path, err, sizeof err) != 0) {
        snprintf(msg, msglen, "%s", err);
        return CLI_FAIL;
    }
    if (!out->tmp) {
        snprintf(msg, msglen, "%s is not a regular file: --mpi writes a regular file", path);
        return CLI_FAIL;
    }
    int mr = io_out_map(out, fmt, arr->type, arr->n, &map, err, sizeof err);
    if (mr == 0) {
        *offset = (long long)((char *)map.data - (char *)map.base);
        if (io_out_unmap(&map, err, sizeof err) == 0) return CLI_OK;
    } else if (mr > 0 && arr->n == 0) {
        if (io_write_array(out, fmt, arr->type, NULL, 0, err, sizeof err) == 0) return CLI_OK;
    } else if (mr > 0) {
        snprintf(err, sizeof err, "%s cannot be written at offsets", path);
    }
    snprintf(msg, msglen, "%s", err);
    return CLI_FAIL;
}

/* Every rank writes its n sorted keys (w bytes each, from global index lo)
 * into rank 0's temporary file out, at offset. Collective. */
static int write_slice(const char *path, const io_out *out, long long offset, const void *sorted, size_t n,
                       size_t w, uint64_t lo)
{
    char msg[700];
    int len = 0;
    char *tmp = NULL;
    if (rank_ == 0) len = (int)strlen(out->tmp) + 1;
    bcast(&len, 1, MPI_INT, "the output's name");
    bcast(&offset, 1, MPI_LONG_LONG, "the output's offset");
    tmp = malloc((size_t)len);
    if (tmp && rank_ == 0) memcpy(tmp, out->tmp, (size_t)len);
    bcast(tmp ? tmp : msg, tmp ? len : 0, MPI_CHAR, "the output's name");
    int wrc = CLI_OK;
    if (!tmp) {
        snprintf(msg, sizeof msg, "out of memory");
        wrc = CLI_FAIL;
    } else if (n) {
        int fd = open(tmp, O_WRONLY);
        const char *p = sorted;
        size_t left = n * w;
        off_t at = (off_t)(offset + (long long)(lo * w));
        while (fd >= 0 && left) {
            ssize_t k = pwrite(fd, p, left, at);
            if (k <= 0) break;
            p += k, left -= (size_t)k, at += k;
        }
        if (fd < 0 || left || fsync(fd) != 0) {
            snprintf(msg, sizeof msg, "cannot write its slice of %s: %s", path, strerror(errno));
            wrc = CLI_FAIL;
        }
        if (fd >= 0 && close(fd) != 0 && wrc == CLI_OK) {
            snprintf(msg, sizeof msg, "cannot write its slice of %s: %s", path, strerror(errno));
            wrc = CLI_FAIL;
        }
    }
    if (wrc != CLI_OK) mpi_error(msg);
    free(tmp);
    return agree(wrc);
}

int cmd_sort_mpi(int argc, char **argv)
{
    mpi_args a;
    if (parse(argc, argv, &a) != 0) return CLI_USAGE;
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        cli_error("sort", "MPI_Init failed");
        return CLI_FAIL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    gpk_mpi_set_timeout(MPI_COMM_WORLD, a.timeout);
    char msg[700] = "", err[600] = "";
    int rc = CLI_OK;
    gpk_ctx *ctx = NULL;
    io_array arr = {0};
    void *keys = NULL, *sorted = NULL;
    io_out out;
    memset(&out, 0, sizeof out);
    long long in_offset = 0, out_offset = 0;
    size_t n_out = 0, w = 0;
    uint64_t lo = 0, hi = 0;
    double ms = 0;
    const char *check_state = "not run";

    /* 0. the ranks agree on what they do */
    if (options_agree(&a) != CLI_OK) {
        MPI_Finalize();
        return CLI_USAGE;
    }
    /* 1. the outputs checked and the temporary file made by rank 0, before any work */
    if (rank_ == 0 && a.out) {
        const char *outs[1] = {a.out}, *roles[1] = {"-o"}, *ins[1] = {a.in}, *in_roles[1] = {"IN"};
        int own[1] = {0};
        if (io_check_outputs(outs, roles, own, 1, ins, in_roles, 1, err, sizeof err) != 0) {
            snprintf(msg, sizeof msg, "%s", err);
            rc = CLI_FAIL;
        }
    }
    /* 2. every rank: the input's type and size, its slice */
    if (io_probe(a.in, a.have_type ? &a.type : NULL, &arr, &in_offset) != 0) {
        /* io_read says what is wrong, without reading a large file: the
         * probe only fails on what it would refuse */
        io_array bad = {0};
        if (io_read(a.in, a.have_type ? &a.type : NULL, &bad, err, sizeof err) != 0)
            snprintf(msg, sizeof msg, "%s", err);
        else snprintf(msg, sizeof msg, "%s: --mpi reads a regular file (raw with --type, or .npy)", a.in);
        io_array_free(&bad);
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK) {
        w = gpk_type_size(arr.type);
        uint64_t N = arr.n;
        lo = N / (uint64_t)size_ * (uint64_t)rank_ + N % (uint64_t)size_ * (uint64_t)rank_ / (uint64_t)size_;
        hi = N / (uint64_t)size_ * (uint64_t)(rank_ + 1) +
            N % (uint64_t)size_ * (uint64_t)(rank_ + 1) / (uint64_t)size_;
        keys = malloc((size_t)(hi - lo) * w + 1);
        sorted = malloc((size_t)(hi - lo + 1) * w + 1);
        if (!keys || !sorted) {
            snprintf(msg, sizeof msg, "out of memory for %llu keys", (unsigned long long)(hi - lo));
            rc = CLI_FAIL;
        } else if (hi > lo &&
                   io_read_into(a.in, in_offset + (long long)(lo * w), keys, (size_t)(hi - lo) * w, err,
                                sizeof err) != 0) {
            snprintf(msg, sizeof msg, "%s", err);
            rc = CLI_FAIL;
        }
    }
    if (rank_context(&a, rc == CLI_OK, &ctx, msg, sizeof msg) != CLI_OK) rc = CLI_FAIL;
    /* rank 0's output file: the header and the size, so every rank can write its slice */
    if (rc == CLI_OK && rank_ == 0 && a.out &&
        open_output(a.out, &arr, &out, &out_offset, msg, sizeof msg) != CLI_OK)
        rc = CLI_FAIL;
    if (msg[0]) mpi_error(msg);
    rc = agree(rc);

    /* 3. the sort */
    if (rc == CLI_OK) {
        barrier("the start of the sort");
        double t0 = MPI_Wtime();
        gpk_status s = gpk_mpi_sort_keys(MPI_COMM_WORLD, ctx, arr.type, keys, (size_t)(hi - lo), sorted,
                                         (size_t)(hi - lo + 1), &n_out, NULL);
        double t = (MPI_Wtime() - t0) * 1e3;
        if (s == GPK_EIO) { /* a rank went silent: no agreeing any more */
            snprintf(msg, sizeof msg, "sort failed: %s", gpk_last_error(ctx));
            cli_mpi_lost("sort", msg);
        }
        all_reduce(&t, &ms, 1, MPI_DOUBLE, MPI_MAX, "the sort's time");
        if (s != GPK_OK) {
            snprintf(msg, sizeof msg, "sort failed: %s (%s)", gpk_status_string(s), gpk_last_error(ctx));
            mpi_error(msg);
            rc = CLI_FAIL;
        }
        rc = agree(rc);
    }
    /* 4. --check */
    if (rc == CLI_OK && a.check) {
        char why[300];
        const char *bad =
            check_global(arr.type, keys, (size_t)(hi - lo), sorted, n_out, arr.n, why, sizeof why);
        check_state = bad ? "FAILED" : "passed";
        if (bad && rank_ == 0) cli_error("sort", "check FAILED: %s", bad);
        rc = agree(bad ? CLI_FAIL : CLI_OK);
    }
    /* 5. every rank writes its slice into rank 0's temporary file */
    if (rc == CLI_OK && a.out && arr.n) rc = write_slice(a.out, &out, out_offset, sorted, n_out, w, lo);
    /* 6. rank 0 renames over OUT only when every rank wrote; else removes the temporary */
    if (rank_ == 0 && out.f) {
        if (rc == CLI_OK) {
            if (io_out_commit(&out, err, sizeof err) != 0) {
                cli_error("sort", "%s", err);
                rc = CLI_FAIL;
            }
        } else {
            io_out_abort(&out);
        }
    }
    rc = agree(rc);
    if (rc == CLI_OK && rank_ == 0) {
        if (a.json)
            printf("{\"command\": \"sort\", \"mpi_ranks\": %d, \"n\": %llu, \"type\": \"%s\", \"backend\": "
                   "\"%s\", "
                   "\"ms\": %.3f, \"keys_per_s\": %.6g, \"check\": \"%s\"}\n",
                   size_, (unsigned long long)arr.n, gpk_type_name(arr.type),
                   gpk_backend_name(gpk_ctx_backend(ctx)), ms, ms > 0 ? arr.n / (ms * 1e-3) : 0.0,
                   check_state);
        if (!a.quiet)
            fprintf(stderr, "gpk sort: %llu %s keys on %d ranks (%s) in %.3f ms, check %s\n",
                    (unsigned long long)arr.n, gpk_type_name(arr.type), size_,
                    gpk_backend_name(gpk_ctx_backend(ctx)), ms, check_state);
    }
    free(keys);
    free(sorted);
    io_array_free(&arr);
    gpk_ctx_destroy(ctx);
    MPI_Finalize();
    return rc;
}
