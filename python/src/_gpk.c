/* gpk._gpk: the CPython extension over libgpk.
 *
 * Plain CPython C API, no binding library: a call costs one tuple parse
 * and one buffer request, which keeps sorting 16 keys close to the C call.
 * The Python layer (gpk/__init__.py) picks the context, makes the copies of
 * the copying variants and allocates device memory through CuPy or
 * PyTorch; this file checks the arrays, runs the library with the GIL
 * released and turns a failed gpk_status into gpk.Error with the library's
 * message. Every check runs before the library touches an array, so an
 * exception leaves the caller's array as it was. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <gpk/gpk.h>
#include <gpk/octree.h>
#include <gpk/search.h>
#include <gpk/sort.h>
#ifdef GPK_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <gpk/cuda.h>
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static PyObject *Error; /* gpk.Error */

/* ---- errors --------------------------------------------------------------------- */

/* gpk.Error(message) with .status (the gpk_status number) and .status_name. */
static PyObject *raise_status(gpk_status s, const char *msg)
{
    const char *text = (msg && *msg) ? msg : gpk_status_string(s);
    PyObject *exc = PyObject_CallFunction(Error, "s", text);
    if (!exc) return NULL;
    PyObject *code = PyLong_FromLong((long)s);
    PyObject *name = PyUnicode_FromString(gpk_status_string(s));
    if (code && name) {
        PyObject_SetAttrString(exc, "status", code);
        PyObject_SetAttrString(exc, "status_name", name);
    }
    Py_XDECREF(code);
    Py_XDECREF(name);
    PyErr_SetObject(Error, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- Context ---------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD gpk_ctx *ctx;
    int busy; /* a call runs on it with the GIL released; read and set under the GIL */
} CtxObject;

static PyTypeObject CtxType;

/* name as a backend; -1 with a ValueError that lists the library's
 * backends ("auto, cpu, cuda, opencl") when it names none. */
static int parse_backend(const char *name, gpk_backend *out)
{
    if (gpk_backend_parse(name, out) == GPK_OK) return 0;
    char list[256];
    size_t used = (size_t)snprintf(list, sizeof list, "auto");
    for (int i = 0; i < gpk_backend_count() && used < sizeof list; i++)
        used +=
            (size_t)snprintf(list + used, sizeof list - used, ", %s", gpk_backend_name(gpk_backend_at(i)));
    PyErr_Format(PyExc_ValueError, "unknown backend '%s' (%s)", name, list);
    return -1;
}

static int Ctx_init(CtxObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"backend", "device", "threads", NULL};
    const char *backend = "auto";
    int device = -1, threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|sii:Context", names, &backend, &device, &threads)) return -1;
    if (self->ctx) {
        PyErr_SetString(PyExc_RuntimeError, "Context already initialised");
        return -1;
    }
    gpk_ctx_opts o = GPK_CTX_OPTS_INIT;
    if (parse_backend(backend, &o.backend) != 0) return -1;
    if (threads < 0) {
        PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: all cores)");
        return -1;
    }
    o.device = device;
    o.threads = threads;
    gpk_ctx *ctx = NULL;
    gpk_status s;
    Py_BEGIN_ALLOW_THREADS s = gpk_ctx_create_ex(&ctx, &o);
    Py_END_ALLOW_THREADS if (s != GPK_OK)
    {
        raise_status(s, gpk_last_error(NULL));
        return -1;
    }
    self->ctx = ctx;
    return 0;
}

static void Ctx_dealloc(CtxObject *self)
{
    if (self->ctx) gpk_ctx_destroy(self->ctx);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The context of a call: open, and not in use by another thread (the
 * library wants one thread per context at a time). */
static CtxObject *ctx_enter(PyObject *o)
{
    if (!PyObject_TypeCheck(o, &CtxType)) {
        PyErr_SetString(PyExc_TypeError, "expected a gpk.Context");
        return NULL;
    }
    CtxObject *c = (CtxObject *)o;
    if (!c->ctx) {
        PyErr_SetString(PyExc_ValueError, "the gpk.Context is closed");
        return NULL;
    }
    if (c->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the gpk.Context is in use by another thread (one context per thread)");
        return NULL;
    }
    c->busy = 1;
    return c;
}

static PyObject *Ctx_close(CtxObject *self, PyObject *unused)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the gpk.Context is in use by another thread");
        return NULL;
    }
    if (self->ctx) gpk_ctx_destroy(self->ctx);
    self->ctx = NULL;
    Py_RETURN_NONE;
}

static PyObject *Ctx_info(CtxObject *self, PyObject *unused)
{
    if (!self->ctx) {
        PyErr_SetString(PyExc_ValueError, "the gpk.Context is closed");
        return NULL;
    }
    gpk_ctx_info in;
    gpk_status s = gpk_ctx_info_get(self->ctx, &in);
    if (s != GPK_OK) return raise_status(s, gpk_last_error(self->ctx));
    return Py_BuildValue("{s:s,s:s,s:s,s:I,s:K,s:I}", "backend", gpk_backend_name(in.backend), "device_name",
                         in.device_name, "platform", in.platform, "compute_units", in.compute_units,
                         "memory_bytes", (unsigned long long)in.memory_bytes, "threads", in.threads);
}

static PyObject *Ctx_get_backend(CtxObject *self, void *unused)
{
    if (!self->ctx) Py_RETURN_NONE;
    return PyUnicode_FromString(gpk_backend_name(gpk_ctx_backend(self->ctx)));
}

static PyObject *Ctx_get_closed(CtxObject *self, void *unused) { return PyBool_FromLong(self->ctx == NULL); }

static PyObject *Ctx_set_threads(CtxObject *self, PyObject *arg)
{
    long t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred()) return NULL;
    if (t < 0 || t > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: all cores)");
        return NULL;
    }
    CtxObject *c = ctx_enter((PyObject *)self);
    if (!c) return NULL;
    gpk_status s = gpk_ctx_set_threads(c->ctx, (int)t);
    c->busy = 0;
    if (s != GPK_OK) return raise_status(s, gpk_last_error(c->ctx));
    Py_RETURN_NONE;
}

/* gpk_host_lock / gpk_host_unlock of a writable contiguous buffer (the
 * Python class keeps the array alive while it is locked). */
static PyObject *ctx_host_lock(CtxObject *self, PyObject *arg, int lock)
{
    Py_buffer v;
    if (PyObject_GetBuffer(arg, &v, PyBUF_ND | PyBUF_WRITABLE) != 0) return NULL;
    CtxObject *c = ctx_enter((PyObject *)self);
    if (!c) {
        PyBuffer_Release(&v);
        return NULL;
    }
    gpk_status s = lock ? gpk_host_lock(c->ctx, v.buf, (size_t)v.len) : gpk_host_unlock(c->ctx, v.buf);
    c->busy = 0;
    PyBuffer_Release(&v);
    if (s != GPK_OK) return raise_status(s, gpk_last_error(c->ctx));
    Py_RETURN_NONE;
}

static PyObject *Ctx_host_lock(CtxObject *self, PyObject *arg) { return ctx_host_lock(self, arg, 1); }
static PyObject *Ctx_host_unlock(CtxObject *self, PyObject *arg) { return ctx_host_lock(self, arg, 0); }

static PyMethodDef Ctx_methods[] = {
    {"close", (PyCFunction)Ctx_close, METH_NOARGS, "Releases the library context now."},
    {"info", (PyCFunction)Ctx_info, METH_NOARGS, "The backend, device and thread count as a dict."},
    {"set_threads", (PyCFunction)Ctx_set_threads, METH_O, "Sets the CPU thread count (0: all cores)."},
    {"_host_lock", (PyCFunction)Ctx_host_lock, METH_O, "gpk_host_lock of a writable contiguous buffer."},
    {"_host_unlock", (PyCFunction)Ctx_host_unlock, METH_O, "gpk_host_unlock of a buffer locked before."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Ctx_getset[] = {
    {"backend", (getter)Ctx_get_backend, NULL, "the backend in use: 'cpu', 'cuda' or 'opencl'", NULL},
    {"closed", (getter)Ctx_get_closed, NULL, "True after close()", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject CtxType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gpk._gpk.Context",
    .tp_basicsize = sizeof(CtxObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Context(backend='auto', device=-1, threads=0): one libgpk context.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Ctx_init,
    .tp_dealloc = (destructor)Ctx_dealloc,
    .tp_methods = Ctx_methods,
    .tp_getset = Ctx_getset,
};

/* ---- arrays --------------------------------------------------------------------- */

/* The gpk type of a buffer format: native or little-endian (on a
 * little-endian host) unsigned, signed or floating item of 4 or 8 bytes. */
static int type_of_format(const char *fmt, Py_ssize_t itemsize, gpk_type *out)
{
    const uint16_t one = 1;
    const int little = *(const uint8_t *)&one == 1;
    if (!fmt) fmt = "B";
    if (*fmt == '@' || *fmt == '=') fmt++;
    else if (*fmt == '<') {
        if (!little) return -1;
        fmt++;
    } else if (*fmt == '>' || *fmt == '!') {
        if (little) return -1;
        fmt++;
    }
    const char c = fmt[0];
    if (c == '\0' || fmt[1] != '\0') return -1;
    char kind; /* the first letter of the gpk type's name (gpk_type_name) */
    if (strchr("BHILQN", c)) kind = 'u';
    else if (strchr("bhilqn", c)) kind = 'i';
    else if (c == 'f' || c == 'd') kind = 'f';
    else return -1;
    char name[16];
    snprintf(name, sizeof name, "%c%d", kind, (int)(8 * itemsize));
    return gpk_type_parse(name, out) == GPK_OK && (Py_ssize_t)gpk_type_size(*out) == itemsize ? 0 : -1;
}

enum { NEED_TYPE = 1, NEED_WRITABLE = 2 };

/* A 1-D C-contiguous buffer of obj; with NEED_TYPE a gpk key type too.
 * TypeError for what is no array or has the wrong dtype, ValueError for
 * the wrong shape, a gap between items or a read-only array. */
static int get_array(PyObject *obj, Py_buffer *v, const char *what, int flags, gpk_type *type)
{
    if (PyObject_GetBuffer(obj, v, PyBUF_RECORDS_RO) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected an array (buffer protocol), got %.80s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    const char *why = NULL;
    PyObject *kind = PyExc_ValueError;
    if ((flags & NEED_TYPE) && type_of_format(v->format, v->itemsize, type) != 0) {
        kind = PyExc_TypeError;
        why = "unsupported dtype (uint32, int32, float32, uint64, int64, float64 in native byte order)";
    } else if (v->ndim != 1) why = "must be 1-D";
    else if (!PyBuffer_IsContiguous(v, 'C'))
        why = "must be contiguous (use numpy.ascontiguousarray or the copying variant)";
    else if ((flags & NEED_WRITABLE) && v->readonly) why = "is read-only (use the copying variant)";
    if (why) {
        PyErr_Format(kind, "%s %s (got format '%s', %d dimension(s))", what, why, v->format ? v->format : "B",
                     v->ndim);
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

static int sort_opts(int key_bits, int radix_bits, const char *algo, gpk_radix_opts *o)
{
    gpk_radix_opts init = GPK_RADIX_OPTS_INIT;
    *o = init;
    if (key_bits < 0 || key_bits > 64) {
        PyErr_Format(PyExc_ValueError, "key_bits must be in 0..64 (got %d)", key_bits);
        return -1;
    }
    if (radix_bits < 0 || radix_bits > 16) {
        PyErr_Format(PyExc_ValueError, "radix_bits must be in 1..16, or 0 for the tuned value (got %d)",
                     radix_bits);
        return -1;
    }
    if (gpk_sort_algo_parse(algo, &o->algorithm) != GPK_OK) {
        PyErr_Format(PyExc_ValueError, "unknown algorithm '%s' (auto, radix, quick, quick-recursive)", algo);
        return -1;
    }
    o->key_bits = (unsigned)key_bits;
    o->radix_bits = (unsigned)radix_bits;
    return 0;
}

static PyObject *sort_done(CtxObject *c, gpk_status s)
{
    c->busy = 0;
    if (s != GPK_OK) return raise_status(s, gpk_last_error(c->ctx));
    return PyUnicode_FromString(gpk_sort_algo_name(gpk_last_sort_algo(c->ctx)));
}

/* sort(ctx, keys, key_bits, radix_bits, algorithm) -> the algorithm that ran */
static PyObject *py_sort(PyObject *m, PyObject *args)
{
    PyObject *co, *ko;
    int kb, rb, desc = 0;
    const char *algo;
    if (!PyArg_ParseTuple(args, "OOiis|p:sort", &co, &ko, &kb, &rb, &algo, &desc)) return NULL;
    gpk_radix_opts o;
    if (sort_opts(kb, rb, algo, &o) != 0) return NULL;
    o.descending = desc;
    Py_buffer k;
    gpk_type t;
    if (get_array(ko, &k, "keys", NEED_TYPE | NEED_WRITABLE, &t) != 0) return NULL;
    CtxObject *c = ctx_enter(co);
    if (!c) {
        PyBuffer_Release(&k);
        return NULL;
    }
    gpk_status s;
    Py_BEGIN_ALLOW_THREADS s = gpk_sort_keys(c->ctx, t, k.buf, (size_t)k.shape[0], &o);
    Py_END_ALLOW_THREADS PyBuffer_Release(&k);
    return sort_done(c, s);
}

/* sort_to(ctx, src, dst, key_bits, radix_bits, algorithm): src's keys sorted
 * into dst (same dtype and length; src may be read-only) -> the algorithm */
static PyObject *py_sort_to(PyObject *m, PyObject *args)
{
    PyObject *co, *so, *dO;
    int kb, rb, desc = 0;
    const char *algo;
    if (!PyArg_ParseTuple(args, "OOOiis|p:sort_to", &co, &so, &dO, &kb, &rb, &algo, &desc)) return NULL;
    gpk_radix_opts o;
    if (sort_opts(kb, rb, algo, &o) != 0) return NULL;
    o.descending = desc;
    Py_buffer sb, db;
    gpk_type st, dt;
    if (get_array(so, &sb, "keys", NEED_TYPE, &st) != 0) return NULL;
    if (get_array(dO, &db, "out", NEED_TYPE | NEED_WRITABLE, &dt) != 0) {
        PyBuffer_Release(&sb);
        return NULL;
    }
    if (st != dt || sb.shape[0] != db.shape[0]) {
        PyErr_Format(PyExc_ValueError, "out must have the keys' dtype and length (%s[%zd], got %s[%zd])",
                     gpk_type_name(st), sb.shape[0], gpk_type_name(dt), db.shape[0]);
        PyBuffer_Release(&sb);
        PyBuffer_Release(&db);
        return NULL;
    }
    CtxObject *c = ctx_enter(co);
    if (!c) {
        PyBuffer_Release(&sb);
        PyBuffer_Release(&db);
        return NULL;
    }
    gpk_status s;
    Py_BEGIN_ALLOW_THREADS s = gpk_sort_keys_to(c->ctx, st, sb.buf, db.buf, (size_t)sb.shape[0], &o);
    Py_END_ALLOW_THREADS PyBuffer_Release(&sb);
    PyBuffer_Release(&db);
    return sort_done(c, s);
}

/* sort_perm(ctx, keys, sigma, key_bits, radix_bits, algorithm): keys sorted
 * in place, sigma (uint32, or uint64 for any n) the stable permutation. */
static PyObject *py_sort_perm(PyObject *m, PyObject *args)
{
    PyObject *co, *ko, *so;
    int kb, rb, desc = 0;
    const char *algo;
    if (!PyArg_ParseTuple(args, "OOOiis|p:sort_perm", &co, &ko, &so, &kb, &rb, &algo, &desc)) return NULL;
    gpk_radix_opts o;
    if (sort_opts(kb, rb, algo, &o) != 0) return NULL;
    o.descending = desc;
    Py_buffer k, sg;
    gpk_type t, st;
    if (get_array(ko, &k, "keys", NEED_TYPE | NEED_WRITABLE, &t) != 0) return NULL;
    if (get_array(so, &sg, "sigma", NEED_TYPE | NEED_WRITABLE, &st) != 0) {
        PyBuffer_Release(&k);
        return NULL;
    }
    PyObject *r = NULL;
    if ((st != GPK_U32 && st != GPK_U64) || sg.shape[0] != k.shape[0])
        PyErr_SetString(PyExc_ValueError, "sigma must be uint32 or uint64 with one entry per key");
    else if (st == GPK_U32 && (uint64_t)k.shape[0] > UINT32_MAX)
        PyErr_SetString(PyExc_ValueError, "a uint32 sigma holds at most 2^32 - 1 keys; pass a uint64 one");
    else {
        CtxObject *c = ctx_enter(co);
        if (c) {
            gpk_status s;
            Py_BEGIN_ALLOW_THREADS if (st == GPK_U64) s =
                gpk_sort_perm64(c->ctx, t, k.buf, (uint64_t *)sg.buf, (size_t)k.shape[0], &o);
            else s = gpk_sort_perm(c->ctx, t, k.buf, (uint32_t *)sg.buf, (size_t)k.shape[0], &o);
            Py_END_ALLOW_THREADS r = sort_done(c, s);
        }
    }
    PyBuffer_Release(&k);
    PyBuffer_Release(&sg);
    return r;
}

/* sort_segmented(ctx, keys, sigma, rows, length, descending): the rows of a
 * (rows x length) matrix stored in the 1-D keys, each sorted on its own
 * (gpk_sort_segmented_keys), or with sigma (uint32, one per key) the
 * per-row permutation too (gpk_sort_segmented_perm). With src (keys
 * only), keys is the output and src's rows are sorted into it
 * (gpk_sort_segmented_keys_to: the copy runs on the context's threads). */
static PyObject *py_sort_segmented(PyObject *m, PyObject *args)
{
    PyObject *co, *ko, *so, *src_o = Py_None;
    unsigned long long rows, length;
    int desc;
    if (!PyArg_ParseTuple(args, "OOOKKp|O:sort_segmented", &co, &ko, &so, &rows, &length, &desc, &src_o))
        return NULL;
    Py_buffer k, sg, src;
    gpk_type t, st = GPK_U32, srct = GPK_U32;
    if (get_array(ko, &k, "keys", NEED_TYPE | NEED_WRITABLE, &t) != 0) return NULL;
    const int with_sigma = so != Py_None, with_src = src_o != Py_None;
    if (with_sigma && get_array(so, &sg, "sigma", NEED_TYPE | NEED_WRITABLE, &st) != 0) {
        PyBuffer_Release(&k);
        return NULL;
    }
    if (with_src && get_array(src_o, &src, "src", NEED_TYPE, &srct) != 0) {
        PyBuffer_Release(&k);
        if (with_sigma) PyBuffer_Release(&sg);
        return NULL;
    }
    PyObject *r = NULL;
    if (length != 0 && rows > (unsigned long long)k.shape[0] / length)
        PyErr_SetString(PyExc_ValueError, "the rows do not fit the keys");
    else if (with_src && (with_sigma || srct != t || src.shape[0] != k.shape[0]))
        PyErr_SetString(PyExc_ValueError, "src must be keys of the same type and length, without sigma");
    else if (with_sigma && (st != GPK_U32 || sg.shape[0] != k.shape[0]))
        PyErr_SetString(PyExc_ValueError, "sigma must be uint32 with one entry per key");
    else {
        CtxObject *c = ctx_enter(co);
        if (c) {
            gpk_segments segs = {(size_t)rows, NULL, NULL, (uint64_t)length};
            gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
            o.descending = desc;
            gpk_status s;
            Py_BEGIN_ALLOW_THREADS if (with_sigma) s =
                gpk_sort_segmented_perm(c->ctx, t, k.buf, (uint32_t *)sg.buf, (size_t)k.shape[0], &segs, &o);
            else if (with_src) s =
                gpk_sort_segmented_keys_to(c->ctx, t, src.buf, k.buf, (size_t)k.shape[0], &segs, &o);
            else s = gpk_sort_segmented_keys(c->ctx, t, k.buf, (size_t)k.shape[0], &segs, &o);
            Py_END_ALLOW_THREADS r = sort_done(c, s);
        }
    }
    PyBuffer_Release(&k);
    if (with_sigma) PyBuffer_Release(&sg);
    if (with_src) PyBuffer_Release(&src);
    return r;
}

/* sort_pairs(ctx, keys, values, key_bits, radix_bits, algorithm): values of
 * any 4- or 8-byte item type move with their keys. */
static PyObject *py_sort_pairs(PyObject *m, PyObject *args)
{
    PyObject *co, *ko, *vo;
    int kb, rb, desc = 0;
    const char *algo;
    if (!PyArg_ParseTuple(args, "OOOiis|p:sort_pairs", &co, &ko, &vo, &kb, &rb, &algo, &desc)) return NULL;
    gpk_radix_opts o;
    if (sort_opts(kb, rb, algo, &o) != 0) return NULL;
    o.descending = desc;
    Py_buffer k, v;
    gpk_type t;
    if (get_array(ko, &k, "keys", NEED_TYPE | NEED_WRITABLE, &t) != 0) return NULL;
    if (get_array(vo, &v, "values", NEED_WRITABLE, NULL) != 0) {
        PyBuffer_Release(&k);
        return NULL;
    }
    PyObject *r = NULL;
    if (v.itemsize != 4 && v.itemsize != 8)
        PyErr_Format(PyExc_TypeError, "values must have 4- or 8-byte items (got %zd bytes)", v.itemsize);
    else if (v.shape[0] != k.shape[0])
        PyErr_Format(PyExc_ValueError, "keys and values differ in length (%zd, %zd)", k.shape[0], v.shape[0]);
    else {
        CtxObject *c = ctx_enter(co);
        if (c) {
            gpk_status s;
            Py_BEGIN_ALLOW_THREADS s = gpk_sort_pairs(c->ctx, t, k.buf, v.itemsize == 4 ? GPK_U32 : GPK_U64,
                                                      v.buf, (size_t)k.shape[0], &o);
            Py_END_ALLOW_THREADS r = sort_done(c, s);
        }
    }
    PyBuffer_Release(&k);
    PyBuffer_Release(&v);
    return r;
}

/* sort_records(ctx, records, key_offset, key_type, key_bits, radix_bits,
 * algorithm): records of any item size 1..256, in place. */
static PyObject *py_sort_records(PyObject *m, PyObject *args)
{
    PyObject *co, *ro;
    Py_ssize_t off;
    const char *tname, *algo;
    int kb, rb, desc = 0;
    if (!PyArg_ParseTuple(args, "OOnsiis|p:sort_records", &co, &ro, &off, &tname, &kb, &rb, &algo, &desc))
        return NULL;
    gpk_radix_opts o;
    if (sort_opts(kb, rb, algo, &o) != 0) return NULL;
    o.descending = desc;
    gpk_type t;
    if (gpk_type_parse(tname, &t) != GPK_OK) {
        PyErr_Format(PyExc_TypeError, "unsupported key type '%s'", tname);
        return NULL;
    }
    Py_buffer r;
    if (get_array(ro, &r, "records", NEED_WRITABLE, NULL) != 0) return NULL;
    PyObject *res = NULL;
    if (r.itemsize < 1 || r.itemsize > 256)
        PyErr_Format(PyExc_ValueError, "records must be 1..256 bytes each (got %zd)", r.itemsize);
    else if (off < 0 || (size_t)off + gpk_type_size(t) > (size_t)r.itemsize)
        PyErr_Format(PyExc_ValueError, "the key field (offset %zd) does not fit a %zd-byte record", off,
                     r.itemsize);
    else {
        CtxObject *c = ctx_enter(co);
        if (c) {
            gpk_status s;
            Py_BEGIN_ALLOW_THREADS s =
                gpk_sort_records(c->ctx, r.buf, (size_t)r.shape[0], (size_t)r.itemsize, (size_t)off, t, &o);
            Py_END_ALLOW_THREADS res = sort_done(c, s);
        }
    }
    PyBuffer_Release(&r);
    return res;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* c_sort_seconds(ctx, keys, calls): seconds per gpk_sort_keys call on keys
 * in place, timed in C: the baseline of the call-overhead benchmark. */
static PyObject *py_c_sort_seconds(PyObject *m, PyObject *args)
{
    PyObject *co, *ko;
    long calls;
    if (!PyArg_ParseTuple(args, "OOl:c_sort_seconds", &co, &ko, &calls)) return NULL;
    if (calls < 1) {
        PyErr_SetString(PyExc_ValueError, "calls must be >= 1");
        return NULL;
    }
    Py_buffer k;
    gpk_type t;
    if (get_array(ko, &k, "keys", NEED_TYPE | NEED_WRITABLE, &t) != 0) return NULL;
    CtxObject *c = ctx_enter(co);
    if (!c) {
        PyBuffer_Release(&k);
        return NULL;
    }
    gpk_status s = GPK_OK;
    double t0 = 0, t1 = 0;
    Py_BEGIN_ALLOW_THREADS t0 = now_s();
    for (long i = 0; i < calls && s == GPK_OK; i++)
        s = gpk_sort_keys(c->ctx, t, k.buf, (size_t)k.shape[0], NULL);
    t1 = now_s();
    Py_END_ALLOW_THREADS PyBuffer_Release(&k);
    c->busy = 0;
    if (s != GPK_OK) return raise_status(s, gpk_last_error(c->ctx));
    return PyFloat_FromDouble((t1 - t0) / (double)calls);
}

/* ---- octree --------------------------------------------------------------------- */

/* The Python side views the nodes through a numpy dtype of this layout. */
_Static_assert(sizeof(gpk_octree_node) == 72, "gpk_octree_node layout changed: update gpk/__init__.py");

/* octree(ctx, points (n x 3 float32, C order), leaf_size, scheme) ->
 * (nodes, xyz, perm as bytearrays, tasks, depth, leaves, ms, pool_ms) */
static PyObject *py_octree(PyObject *m, PyObject *args)
{
    PyObject *co, *po;
    long leaf;
    const char *scheme_name;
    if (!PyArg_ParseTuple(args, "OOls:octree", &co, &po, &leaf, &scheme_name)) return NULL;
    gpk_octree_scheme scheme;
    if (gpk_octree_scheme_parse(scheme_name, &scheme) != GPK_OK) {
        PyErr_Format(PyExc_ValueError, "unknown scheme '%s' (static, blocking, lockfree, steal, morton)",
                     scheme_name);
        return NULL;
    }
    if (leaf < 1 || leaf > (long)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "leaf_size must be >= 1");
        return NULL;
    }
    Py_buffer p;
    if (PyObject_GetBuffer(po, &p, PyBUF_RECORDS_RO) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "points: expected an array, got %.80s", Py_TYPE(po)->tp_name);
        return NULL;
    }
    gpk_type t;
    const char *why = NULL;
    PyObject *kind = PyExc_ValueError;
    if (type_of_format(p.format, p.itemsize, &t) != 0 || t != GPK_F32)
        why = "must be float32", kind = PyExc_TypeError;
    else if (p.ndim != 2 || p.shape[1] != 3) why = "must have shape (n, 3)";
    else if (!PyBuffer_IsContiguous(&p, 'C')) why = "must be C-contiguous";
    if (why) {
        PyErr_Format(kind, "points %s", why);
        PyBuffer_Release(&p);
        return NULL;
    }
    CtxObject *c = ctx_enter(co);
    if (!c) {
        PyBuffer_Release(&p);
        return NULL;
    }
    gpk_octree tree;
    gpk_status s;
    Py_BEGIN_ALLOW_THREADS s = gpk_octree_build(c->ctx, (const float *)p.buf, (size_t)p.shape[0],
                                                (unsigned)leaf, scheme, NULL, &tree);
    Py_END_ALLOW_THREADS PyBuffer_Release(&p);
    c->busy = 0;
    if (s != GPK_OK) return raise_status(s, gpk_last_error(c->ctx));
    PyObject *r = Py_BuildValue(
        "(NNNKIndd)",
        PyByteArray_FromStringAndSize((const char *)tree.nodes,
                                      (Py_ssize_t)(tree.n_nodes * sizeof *tree.nodes)),
        PyByteArray_FromStringAndSize((const char *)tree.xyz, (Py_ssize_t)(tree.n * 3 * sizeof(float))),
        PyByteArray_FromStringAndSize((const char *)tree.perm, (Py_ssize_t)(tree.n * sizeof(uint32_t))),
        (unsigned long long)tree.tasks, tree.depth, (Py_ssize_t)tree.leaves, tree.ms, tree.pool_ms);
    gpk_octree_free(&tree);
    return r;
}

/* ---- local search ----------------------------------------------------------------- */

static const char *stop_name(const gpk_search_result *r)
{
#ifdef GPK_PY_HAVE_STOPPED
    switch (r->stopped) {
    case GPK_SEARCH_TIME_LIMIT: return "time_limit";
    case GPK_SEARCH_CANCELLED: return "cancelled";
    default: return "done";
    }
#else
    (void)r;
    return "done";
#endif
}

/* A count argument: a Python int (or an object with __index__) in
 * 0 .. max; negative numbers and numbers beyond max are errors (the "k" and
 * "K" formats would wrap them silently: iters=-1 ran for ever, iters=2**64
 * became the default). */
static int count_arg(PyObject *o, const char *what, unsigned long long max, unsigned long long *out)
{
    PyObject *i = PyNumber_Index(o);
    if (!i) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.60s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    unsigned long long u = 0;
    int bad = overflow < 0 || (!overflow && v < 0);
    if (!bad && overflow > 0) {
        u = PyLong_AsUnsignedLongLong(i);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            bad = 1;
        }
    } else if (!bad) {
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(i);
            return -1;
        }
        u = (unsigned long long)v;
    }
    Py_DECREF(i);
    if (bad || u > max) {
        PyErr_Format(PyExc_ValueError, "%s must be in 0 .. %llu", what, max);
        return -1;
    }
    *out = u;
    return 0;
}

/* Ctrl-C during a search: the search (with the instance's loading) runs on
 * a thread of its own, while the calling thread, which alone runs Python's
 * signal handlers, waits with the GIL released and looks at its signals
 * every 50 ms. A KeyboardInterrupt (or any exception a signal handler
 * raises) sets the search's cancel flag, which every phase of the search
 * polls (the neighbour lists too), and is raised when the search has
 * returned. */
typedef struct py_stop {
    volatile sig_atomic_t cancel;
    PyObject *type, *value, *tb;
} py_stop;

typedef struct py_job {
    void (*run)(void *arg);
    void *arg;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
} py_job;

static void *py_job_main(void *p)
{
    py_job *j = p;
    j->run(j->arg);
    pthread_mutex_lock(&j->lock);
    j->done = 1;
    pthread_cond_signal(&j->cond);
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

/* Runs run(arg) to its end, with the GIL released; a signal's exception
 * sets st->cancel (run must stop soon after) and is kept in st. Without a
 * thread (none could be started) it runs here, as before: uninterruptible. */
static void py_run_interruptible(void (*run)(void *arg), void *arg, py_stop *st)
{
    py_job j;
    j.run = run, j.arg = arg, j.done = 0;
    pthread_t tid;
    int started = pthread_mutex_init(&j.lock, NULL) == 0;
    if (started && pthread_cond_init(&j.cond, NULL) != 0) {
        pthread_mutex_destroy(&j.lock);
        started = 0;
    }
    if (started && pthread_create(&tid, NULL, py_job_main, &j) != 0) {
        pthread_cond_destroy(&j.cond);
        pthread_mutex_destroy(&j.lock);
        started = 0;
    }
    if (!started) {
        PyThreadState *ts = PyEval_SaveThread();
        run(arg);
        PyEval_RestoreThread(ts);
        return;
    }
    for (;;) {
        PyThreadState *ts = PyEval_SaveThread(); /* the GIL released while waiting */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_mutex_lock(&j.lock);
        if (!j.done) pthread_cond_timedwait(&j.cond, &j.lock, &until);
        const int done = j.done;
        pthread_mutex_unlock(&j.lock);
        PyEval_RestoreThread(ts);
        if (done) break;
        if (!st->cancel && PyErr_CheckSignals() != 0) {
            PyErr_Fetch(&st->type, &st->value, &st->tb);
            st->cancel = 1;
        }
    }
    pthread_join(tid, NULL);
    pthread_cond_destroy(&j.cond);
    pthread_mutex_destroy(&j.lock);
}

/* The instances a search may hold, zeroed, so that all three can be freed. */
typedef struct py_instances {
    gpk_qap qap;
    gpk_tsp tsp;
    gpk_ppp ppp;
} py_instances;

/* Reads (path, or text labelled by name) or generates (PPP: m, n, seed)
 * the instance of prob->kind into in and prob (without the GIL). */
static gpk_status py_load_instance(gpk_search_problem *prob, py_instances *in, const char *path,
                                   const char *text, Py_ssize_t text_len, const char *name,
                                   unsigned long long m_rows, unsigned long long n_cols,
                                   unsigned long long inst_seed)
{
    gpk_status ls = GPK_EINVAL;
    switch (prob->kind) {
    case GPK_PROBLEM_QAP:
        ls = path ? gpk_qap_load(path, &in->qap)
                  : gpk_qap_parse(text ? text : "", (size_t)text_len, name, &in->qap);
        if (ls == GPK_OK) prob->qap = &in->qap;
        break;
    case GPK_PROBLEM_TSP:
        ls = path ? gpk_tsp_load(path, &in->tsp)
                  : gpk_tsp_parse(text ? text : "", (size_t)text_len, name, &in->tsp);
        if (ls == GPK_OK) prob->tsp = &in->tsp;
        break;
    case GPK_PROBLEM_PPP:
        ls = gpk_ppp_generate((uint32_t)m_rows, (uint32_t)n_cols, inst_seed, &in->ppp);
        if (ls == GPK_OK) prob->ppp = &in->ppp;
        break;
    }
    return ls;
}

static void py_free_instances(py_instances *in)
{
    gpk_qap_free(&in->qap);
    gpk_tsp_free(&in->tsp);
    gpk_ppp_free(&in->ppp);
}

/* One search with its instance, as py_search runs it off the calling
 * thread (py_run_interruptible). */
typedef struct search_job {
    gpk_search_problem prob;
    gpk_search_opts o;
    const char *path, *text, *name;
    Py_ssize_t text_len, start_len;
    unsigned long long m_rows, n_cols, inst_seed;
    int have_start, multi, count;
    gpk_ctx **ctxs;
    gpk_search_result res;
    gpk_search_problem_info info;
    gpk_status s, ls;
    int bad_start;
    char msg[512];
} search_job;

static void search_job_run(void *arg)
{
    search_job *J = arg;
    py_instances in;
    memset(&in, 0, sizeof in);
    J->s = GPK_OK;
    J->ls = py_load_instance(&J->prob, &in, J->path, J->text, J->text_len, J->name, J->m_rows, J->n_cols,
                             J->inst_seed);
    if (J->ls == GPK_OK) J->ls = gpk_search_problem_describe(&J->prob, &J->info);
    if (J->ls != GPK_OK) {
        snprintf(J->msg, sizeof J->msg, "%s", gpk_last_error(NULL)); /* this thread's message */
    } else if (J->have_start && J->start_len != (Py_ssize_t)J->info.n) {
        J->s = GPK_EINVAL, J->bad_start = 1;
        snprintf(J->msg, sizeof J->msg, "start has %zd entries, the instance has %u", J->start_len,
                 J->info.n);
    } else {
        J->s = J->multi ? gpk_search_run_multi(J->ctxs, J->count, &J->prob, &J->o, &J->res)
                        : gpk_search_run(J->ctxs[0], &J->prob, &J->o, &J->res);
        if (J->s != GPK_OK) snprintf(J->msg, sizeof J->msg, "%s", gpk_last_error(J->ctxs[0]));
    }
    py_free_instances(&in);
}

/* The search's names and limits into o; -1 with the exception set. */
static int py_search_opts(gpk_search_opts *o, const char *algo, const char *nb, const char *eval,
                          const char *qd, PyObject *limit_o)
{
    if (gpk_search_algo_parse(algo, &o->algo) != GPK_OK) {
        PyErr_Format(PyExc_ValueError, "unknown algo '%s' (auto, hc, hc-first, tabu, its, multistart)", algo);
        return -1;
    }
    if (gpk_neighbourhood_parse(nb, &o->nb) != GPK_OK) {
        PyErr_Format(PyExc_ValueError, "unknown nb '%s' (default, swap, 2opt, or2opt, flip1, flip2)", nb);
        return -1;
    }
    if (gpk_search_eval_parse(eval, &o->eval) != GPK_OK) {
        PyErr_Format(PyExc_ValueError, "unknown eval '%s' (ours, paper)", eval);
        return -1;
    }
    if (strcmp(qd, "table") == 0) o->qap_delta = GPK_QAP_DELTA_TABLE;
    else if (strcmp(qd, "formula") == 0) o->qap_delta = GPK_QAP_DELTA_FORMULA;
    else {
        PyErr_Format(PyExc_ValueError, "unknown qap_delta '%s' (table, formula)", qd);
        return -1;
    }
    if (limit_o != Py_None) {
        double lim = PyFloat_AsDouble(limit_o);
        if (lim == -1.0 && PyErr_Occurred()) return -1;
        if (!(lim > 0) || lim > 1e9) {
            PyErr_SetString(PyExc_ValueError, "time_limit must be > 0 seconds, at most 1e9 (or None)");
            return -1;
        }
#ifdef GPK_PY_HAVE_TIME_LIMIT
        o->time_limit = lim;
#else
        PyErr_SetString(PyExc_NotImplementedError,
                        "time_limit: this libgpk's search options have no time limit yet");
        return -1;
#endif
    }
    return 0;
}

enum { PY_MAX_CTX = 64 };

/* One context, or several (a list): gpk_search_run_multi, one host thread
 * per context. Marks them busy; the count, or -1 with the exception set
 * (none left busy). */
static int py_search_contexts(PyObject *co, CtxObject **cs, gpk_ctx **ctxs, int *multi)
{
    int count = 0;
    *multi = PyList_Check(co) || PyTuple_Check(co);
    if (*multi) {
        const Py_ssize_t k = PySequence_Fast_GET_SIZE(co);
        if (k < 1 || k > PY_MAX_CTX)
            PyErr_Format(PyExc_ValueError, "between 1 and %d contexts", (int)PY_MAX_CTX);
        for (Py_ssize_t i = 0; i < k && !PyErr_Occurred(); i++) {
            PyObject *it = PySequence_Fast_GET_ITEM(co, i);
            for (int j = 0; j < count; j++)
                if ((PyObject *)cs[j] == it)
                    PyErr_SetString(PyExc_ValueError, "the contexts must be distinct");
            if (PyErr_Occurred()) break;
            CtxObject *c1 = ctx_enter(it);
            if (!c1) break;
            cs[count] = c1;
            ctxs[count++] = c1->ctx;
        }
    } else if ((cs[0] = ctx_enter(co)) != NULL) {
        ctxs[0] = cs[0]->ctx;
        count = 1;
    }
    if (PyErr_Occurred()) {
        for (int j = 0; j < count; j++) cs[j]->busy = 0;
        return -1;
    }
    return count;
}

/* search(ctx, kind, **options) -> (solution bytearray of uint32, name, best,
 * iterations, evaluated, gpu_evaluated, ms, local_optimum, stopped).
 * ctx: a Context, or a list of distinct Contexts for gpk_search_run_multi.
 * The instance: path (a QAPLIB / TSPLIB file), or text (the same format in
 * memory, labelled by name), or for PPP m, n and instance_seed. */
static PyObject *py_search(PyObject *m, PyObject *args, PyObject *kw)
{
    static char *names[] = {"ctx",           "kind",  "path", "text",      "name",         "m",      "n",
                            "instance_seed", "algo",  "nb",   "iters",     "global_iters", "tenure", "starts",
                            "seed",          "start", "eval", "qap_delta", "time_limit",   NULL};
    PyObject *co, *start_o = Py_None, *limit_o = Py_None;
    PyObject *m_o = NULL, *n_o = NULL, *inst_seed_o = NULL, *iters_o = NULL, *global_o = NULL,
             *tenure_o = NULL, *starts_o = NULL, *seed_o = NULL;
    const char *kind_s, *path = NULL, *name = "instance", *algo = "auto", *nb = "default", *eval = "ours",
                        *qd = "table";
    const char *text = NULL;
    Py_ssize_t text_len = 0;
    unsigned long long m_rows = 0, n_cols = 0, global = 0, tenure = 0, starts = 0;
    unsigned long long inst_seed = 1, iters = 0, seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Os|zz#sOOOssOOOOOOssO:search", names, &co, &kind_s, &path,
                                     &text, &text_len, &name, &m_o, &n_o, &inst_seed_o, &algo, &nb, &iters_o,
                                     &global_o, &tenure_o, &starts_o, &seed_o, &start_o, &eval, &qd,
                                     &limit_o))
        return NULL;
    const unsigned long long U32 = UINT32_MAX, U64 = UINT64_MAX;
    if ((m_o && count_arg(m_o, "m", U32, &m_rows) != 0) || (n_o && count_arg(n_o, "n", U32, &n_cols) != 0) ||
        (inst_seed_o && count_arg(inst_seed_o, "instance_seed", U64, &inst_seed) != 0) ||
        (iters_o && count_arg(iters_o, "iters", U64, &iters) != 0) ||
        (global_o && count_arg(global_o, "global_iters", U32, &global) != 0) ||
        (tenure_o && count_arg(tenure_o, "tenure", U32, &tenure) != 0) ||
        (starts_o && count_arg(starts_o, "starts", U32, &starts) != 0) ||
        (seed_o && count_arg(seed_o, "seed", U64, &seed) != 0))
        return NULL;
    gpk_search_opts o = GPK_SEARCH_OPTS_INIT;
    gpk_search_problem prob = {GPK_PROBLEM_QAP, NULL, NULL, NULL};
    if (gpk_problem_parse(kind_s, &prob.kind) != GPK_OK) {
        PyErr_Format(PyExc_ValueError, "unknown problem '%s'", kind_s);
        return NULL;
    }
    if (prob.kind == GPK_PROBLEM_PPP && (m_rows < 1 || n_cols < 1)) {
        PyErr_Format(PyExc_ValueError, "ppp needs m >= 1 and n >= 1 (got m = %llu, n = %llu)", m_rows,
                     n_cols);
        return NULL;
    }
    if (py_search_opts(&o, algo, nb, eval, qd, limit_o) != 0) return NULL;
    o.iters = iters;
    o.global_iters = (uint32_t)global;
    o.tenure = (uint32_t)tenure;
    o.starts = (uint32_t)starts;
    o.seed = seed;
    py_stop stop = {0, NULL, NULL, NULL};
    o.cancel = &stop.cancel;

    Py_buffer sb = {0};
    int have_start = 0;
    if (start_o != Py_None) {
        gpk_type st;
        if (get_array(start_o, &sb, "start", NEED_TYPE, &st) != 0) return NULL;
        have_start = 1;
        if (st != GPK_U32) {
            PyBuffer_Release(&sb);
            PyErr_SetString(PyExc_TypeError, "start must be uint32");
            return NULL;
        }
        o.start = (const uint32_t *)sb.buf;
    }
    CtxObject *cs[PY_MAX_CTX];
    gpk_ctx *ctxs[PY_MAX_CTX];
    int multi;
    const int count = py_search_contexts(co, cs, ctxs, &multi);
    if (count < 0) {
        if (have_start) PyBuffer_Release(&sb);
        return NULL;
    }
    search_job J;
    memset(&J, 0, sizeof J);
    J.prob = prob, J.o = o, J.path = path, J.text = text, J.text_len = text_len, J.name = name;
    J.m_rows = m_rows, J.n_cols = n_cols, J.inst_seed = inst_seed;
    J.have_start = have_start, J.start_len = have_start ? sb.shape[0] : 0;
    J.multi = multi, J.ctxs = ctxs, J.count = count;
    J.o.cancel = &stop.cancel;
    py_run_interruptible(search_job_run, &J, &stop);
    gpk_search_result res = J.res;
    const gpk_status s = J.s, ls = J.ls;
    const int bad_start = J.bad_start;
    const char *msg = J.msg;
    const gpk_search_problem_info info = J.info;
    for (int j = 0; j < count; j++) cs[j]->busy = 0;
    if (have_start) PyBuffer_Release(&sb);
    if (stop.type) { /* interrupted: the signal's exception, not a result */
        gpk_search_result_free(&res);
        PyErr_Restore(stop.type, stop.value, stop.tb);
        return NULL;
    }
    if (ls != GPK_OK) return raise_status(ls, msg);
    if (s != GPK_OK) {
        if (bad_start) {
            PyErr_SetString(PyExc_ValueError, msg);
            return NULL;
        }
        return raise_status(s, msg);
    }
    PyObject *r =
        Py_BuildValue("(NsLKKKdOs)",
                      PyByteArray_FromStringAndSize((const char *)res.solution,
                                                    (Py_ssize_t)res.n * (Py_ssize_t)sizeof(uint32_t)),
                      info.name, (long long)res.best, (unsigned long long)res.iterations,
                      (unsigned long long)res.evaluated, (unsigned long long)res.gpu_evaluated, res.ms,
                      res.local_optimum ? Py_True : Py_False, stop_name(&res));
    gpk_search_result_free(&res);
    return r;
}

/* ---- information ------------------------------------------------------------------ */

static PyObject *py_backend_available(PyObject *m, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    gpk_backend b;
    if (parse_backend(name, &b) != 0) return NULL;
    return PyBool_FromLong(gpk_backend_available(b));
}

/* The names of the backends the library knows, built in or not, in its
 * order (gpk_backend_at). */
static PyObject *py_backends(PyObject *m, PyObject *unused)
{
    const int n = gpk_backend_count();
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *name = PyUnicode_FromString(gpk_backend_name(gpk_backend_at(i)));
        if (!name) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, name);
    }
    return t;
}

/* ---- CUDA arrays ---------------------------------------------------------------- */
#ifdef GPK_HAVE_CUDA

/* cuda_pointer_device(ptr) -> the device the pointer's memory lives on. */
static PyObject *py_cuda_pointer_device(PyObject *m, PyObject *arg)
{
    unsigned long long p = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    struct cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, (const void *)(uintptr_t)p);
    if (e != cudaSuccess || (at.type != cudaMemoryTypeDevice && at.type != cudaMemoryTypeManaged)) {
        cudaGetLastError();
        PyErr_SetString(PyExc_ValueError, "the array's data pointer is not CUDA device memory");
        return NULL;
    }
    return PyLong_FromLong(at.device);
}

/* cuda_sort(ctx, key_type, keys_in, keys_out, value_width, values_in,
 * values_out, n, key_bits, radix_bits, algorithm, stream, temp, temp_bytes,
 * query): the device API on raw pointers. key_bits -1: every bit of the
 * type, 0: detect (one reduction and one stream synchronization). query:
 * returns the temporary bytes needed and runs nothing. temp 0 (and not a
 * query): temporary storage from cudaMallocAsync on the stream. */
static PyObject *py_cuda_sort(PyObject *m, PyObject *args)
{
    PyObject *co;
    const char *tname, *algo;
    unsigned long long kin, kout, vin, vout, stream, temp, temp_bytes;
    Py_ssize_t vw, n;
    int kb, rb, query, desc = 0;
    if (!PyArg_ParseTuple(args, "OsKKnKKniisKKKp|p:cuda_sort", &co, &tname, &kin, &kout, &vw, &vin, &vout, &n,
                          &kb, &rb, &algo, &stream, &temp, &temp_bytes, &query, &desc))
        return NULL;
    gpk_type t;
    if (gpk_type_parse(tname, &t) != GPK_OK) {
        PyErr_Format(PyExc_TypeError, "unsupported key type '%s'", tname);
        return NULL;
    }
    if (n < 0 || (vw != 0 && vw != 4 && vw != 8)) {
        PyErr_SetString(PyExc_ValueError, "bad length or value width");
        return NULL;
    }
    gpk_radix_opts o;
    if (sort_opts(kb < 0 ? 0 : kb, rb, algo, &o) != 0) return NULL;
    o.descending = desc;
    const unsigned flags = kb == 0 ? GPK_CUDA_DETECT_BITS : 0u;
    CtxObject *c = ctx_enter(co);
    if (!c) return NULL;
    if (gpk_ctx_backend(c->ctx) != GPK_BACKEND_CUDA) {
        c->busy = 0;
        PyErr_Format(PyExc_ValueError, "a CUDA array needs a CUDA context (this one is %s)",
                     gpk_backend_name(gpk_ctx_backend(c->ctx)));
        return NULL;
    }
    cudaStream_t st = (cudaStream_t)(uintptr_t)stream;
    void *d_temp = query ? NULL : (void *)(uintptr_t)temp;
    size_t bytes = query ? 0 : (size_t)temp_bytes;
    gpk_status s = GPK_OK;
    char msg[256] = "";
    Py_BEGIN_ALLOW_THREADS int own = 0, switched = 0, prev_dev = 0;
    if (!query && !d_temp) {
        s = vw ? gpk_cuda_sort_pairs(c->ctx, NULL, &bytes, t, (const void *)(uintptr_t)kin,
                                     (void *)(uintptr_t)kout, (size_t)vw, (const void *)(uintptr_t)vin,
                                     (void *)(uintptr_t)vout, (size_t)n, &o, flags, st)
               : gpk_cuda_sort_keys(c->ctx, NULL, &bytes, t, (const void *)(uintptr_t)kin,
                                    (void *)(uintptr_t)kout, (size_t)n, &o, flags, st);
        if (s == GPK_OK) {
            /* on the keys' device, which need not be the thread's current one */
            struct cudaPointerAttributes at;
            if (n > 0 && cudaPointerGetAttributes(&at, (const void *)(uintptr_t)kin) == cudaSuccess &&
                cudaGetDevice(&prev_dev) == cudaSuccess && at.device != prev_dev &&
                cudaSetDevice(at.device) == cudaSuccess)
                switched = 1;
            cudaGetLastError();
            cudaError_t e = cudaMallocAsync(&d_temp, bytes ? bytes : 1, st);
            if (e != cudaSuccess) {
                s = GPK_ENOMEM;
                snprintf(msg, sizeof msg, "cudaMallocAsync of %zu temporary bytes: %s", bytes,
                         cudaGetErrorString(e));
            } else own = 1;
        }
    }
    if (s == GPK_OK)
        s = vw ? gpk_cuda_sort_pairs(c->ctx, d_temp, &bytes, t, (const void *)(uintptr_t)kin,
                                     (void *)(uintptr_t)kout, (size_t)vw, (const void *)(uintptr_t)vin,
                                     (void *)(uintptr_t)vout, (size_t)n, &o, flags, st)
               : gpk_cuda_sort_keys(c->ctx, d_temp, &bytes, t, (const void *)(uintptr_t)kin,
                                    (void *)(uintptr_t)kout, (size_t)n, &o, flags, st);
    if (s != GPK_OK && !*msg) snprintf(msg, sizeof msg, "%s", gpk_last_error(c->ctx));
    if (own) cudaFreeAsync(d_temp, st);
    if (switched) cudaSetDevice(prev_dev);
    Py_END_ALLOW_THREADS c->busy = 0;
    if (s != GPK_OK) return raise_status(s, msg);
    if (query) return PyLong_FromSize_t(bytes);
    Py_RETURN_NONE;
}

/* cuda_sort_segmented(ctx, key_type, keys_in, keys_out, value_width,
 * values_in, values_out, rows, length, descending, stream, temp,
 * temp_bytes, query): the rows of a (rows x length) matrix on the device,
 * each sorted on its own (gpk_cuda_sort_segmented_keys / _pairs). query:
 * returns the temporary bytes needed and runs nothing; else temp (temp_bytes
 * of device memory, from the caller's stream-ordered pool) is used. */
static PyObject *py_cuda_sort_segmented(PyObject *m, PyObject *args)
{
    PyObject *co;
    const char *tname;
    unsigned long long kin, kout, vin, vout, rows, length, stream, temp, temp_bytes;
    Py_ssize_t vw;
    int desc, query;
    if (!PyArg_ParseTuple(args, "OsKKnKKKKpKKKp:cuda_sort_segmented", &co, &tname, &kin, &kout, &vw, &vin,
                          &vout, &rows, &length, &desc, &stream, &temp, &temp_bytes, &query))
        return NULL;
    gpk_type t;
    if (gpk_type_parse(tname, &t) != GPK_OK) {
        PyErr_Format(PyExc_TypeError, "unsupported key type '%s'", tname);
        return NULL;
    }
    if (vw != 0 && vw != 4 && vw != 8) {
        PyErr_SetString(PyExc_ValueError, "bad value width");
        return NULL;
    }
    if (length && rows > UINT64_MAX / length) {
        PyErr_SetString(PyExc_ValueError, "too many keys");
        return NULL;
    }
    CtxObject *c = ctx_enter(co);
    if (!c) return NULL;
    if (gpk_ctx_backend(c->ctx) != GPK_BACKEND_CUDA) {
        c->busy = 0;
        PyErr_Format(PyExc_ValueError, "a CUDA array needs a CUDA context (this one is %s)",
                     gpk_backend_name(gpk_ctx_backend(c->ctx)));
        return NULL;
    }
    gpk_segments segs = {(size_t)rows, NULL, NULL, (uint64_t)length};
    gpk_segmented_opts o = GPK_SEGMENTED_OPTS_INIT;
    o.descending = desc;
    const size_t n = (size_t)(rows * length);
    cudaStream_t st = (cudaStream_t)(uintptr_t)stream;
    void *d_temp = query ? NULL : (void *)(uintptr_t)temp;
    size_t bytes = query ? 0 : (size_t)temp_bytes;
    gpk_status s;
    Py_BEGIN_ALLOW_THREADS s = vw
        ? gpk_cuda_sort_segmented_pairs(c->ctx, d_temp, &bytes, t, (const void *)(uintptr_t)kin,
                                        (void *)(uintptr_t)kout, (size_t)vw, (const void *)(uintptr_t)vin,
                                        (void *)(uintptr_t)vout, n, &segs, &o, st)
        : gpk_cuda_sort_segmented_keys(c->ctx, d_temp, &bytes, t, (const void *)(uintptr_t)kin,
                                       (void *)(uintptr_t)kout, n, &segs, &o, st);
    Py_END_ALLOW_THREADS c->busy = 0;
    if (s != GPK_OK) return raise_status(s, gpk_last_error(c->ctx));
    if (query) return PyLong_FromSize_t(bytes);
    Py_RETURN_NONE;
}
#endif

/* ---- module ------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"sort", py_sort, METH_VARARGS, "sort(ctx, keys, key_bits, radix_bits, algorithm): keys in place."},
    {"sort_to", py_sort_to, METH_VARARGS,
     "sort_to(ctx, keys, out, key_bits, radix_bits, algorithm): keys sorted into out."},
    {"sort_perm", py_sort_perm, METH_VARARGS,
     "sort_perm(ctx, keys, sigma, key_bits, radix_bits, algorithm)."},
    {"sort_pairs", py_sort_pairs, METH_VARARGS,
     "sort_pairs(ctx, keys, values, key_bits, radix_bits, algorithm)."},
    {"sort_segmented", py_sort_segmented, METH_VARARGS,
     "sort_segmented(ctx, keys, sigma, rows, length, descending): each row sorted on its own."},
    {"sort_records", py_sort_records, METH_VARARGS,
     "sort_records(ctx, records, key_offset, key_type, key_bits, radix_bits, algorithm)."},
    {"c_sort_seconds", py_c_sort_seconds, METH_VARARGS, "Seconds per gpk_sort_keys call, timed in C."},
    {"octree", py_octree, METH_VARARGS, "octree(ctx, points, leaf_size, scheme)."},
    {"search", (PyCFunction)(void (*)(void))py_search, METH_VARARGS | METH_KEYWORDS,
     "search(ctx, kind, **options)."},
    {"backend_available", py_backend_available, METH_O, "True when the backend is built and has a device."},
    {"backends", py_backends, METH_NOARGS, "The names of the backends the library knows, built in or not."},
#ifdef GPK_HAVE_CUDA
    {"cuda_pointer_device", py_cuda_pointer_device, METH_O, "The CUDA device of a device pointer."},
    {"cuda_sort", py_cuda_sort, METH_VARARGS, "The device-pointer sort (gpk/cuda.h) on a stream."},
    {"cuda_sort_segmented", py_cuda_sort_segmented, METH_VARARGS,
     "The device-pointer segmented sort of rows (gpk/cuda.h) on a stream."},
#endif
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "gpk._gpk", "The C extension over libgpk.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__gpk(void)
{
    if (PyType_Ready(&CtxType) < 0) return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (!mod) return NULL;
    Error = PyErr_NewExceptionWithDoc("gpk.Error",
                                      "A libgpk call failed: the message is the library's; .status is the "
                                      "gpk_status number and .status_name its text.",
                                      PyExc_RuntimeError, NULL);
    if (!Error || PyModule_AddObjectRef(mod, "Error", Error) < 0 ||
        PyModule_AddObjectRef(mod, "Context", (PyObject *)&CtxType) < 0 ||
        PyModule_AddStringConstant(mod, "version", gpk_version()) < 0 ||
        PyModule_AddIntConstant(mod, "HAVE_CUDA",
#ifdef GPK_HAVE_CUDA
                                1
#else
                                0
#endif
                                ) < 0 ||
        PyModule_AddIntConstant(mod, "HAVE_TIME_LIMIT",
#ifdef GPK_PY_HAVE_TIME_LIMIT
                                1
#else
                                0
#endif
                                ) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
