/* The inner product of a natural coordinate with a stride: the hot loop of cute.crd2idx and
 * Layout.__call__, in C (optional: without it, cute.int_tuple._dot, the reference, runs).
 *
 * make_dot(static_int) returns dot(crd, shape, stride), a METH_FASTCALL function with the
 * contract of cute.int_tuple._dot: the sum of c*d over the leaves when crd, shape and stride
 * are congruent (exact tuples of equal lengths at every level, or three leaves), with leaves
 * that are exact ints in crd and exact ints or static_int instances (cute's Int, which keeps
 * int's multiplication) in shape and stride; else None, and the caller takes its general
 * Python path. Bools, numpy integers, other int subclasses, lists and None give None.
 *
 * The sum is exact: products and partial sums stay in int64 while none overflows
 * (__builtin_mul_overflow / __builtin_add_overflow); an overflowing product is taken with
 * Python's own int multiplication and the int64 part moves into a Python int accumulator.
 * Errors of those operations (MemoryError) propagate. Tuples nested deeper than MAX_DEPTH give
 * None (bounded C recursion; the Python path then decides what such an input means).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MAX_DEPTH 100

typedef struct {
    long long small;      /* the part of the sum that fits int64 */
    PyObject *big;        /* the rest, a Python int, or NULL while there is none */
    PyObject *static_int; /* the extra leaf type of shape and stride */
} Sum;

static int is_leaf(PyObject *x, PyObject *static_int)
{
    return PyLong_CheckExact(x) || (PyObject *)Py_TYPE(x) == static_int;
}

/* big += x; 0, or -1 with an exception set. */
static int add_big(Sum *sum, PyObject *x)
{
    if (sum->big == NULL) {
        Py_INCREF(x);
        sum->big = x;
        return 0;
    }
    PyObject *t = PyNumber_Add(sum->big, x);
    if (t == NULL)
        return -1;
    Py_SETREF(sum->big, t);
    return 0;
}

/* sum += c*d for two int leaves; 0, or -1 with an exception set. */
static int add_product(Sum *sum, PyObject *c, PyObject *d)
{
    int oc, od;
    long long a = PyLong_AsLongLongAndOverflow(c, &oc);
    long long b = PyLong_AsLongLongAndOverflow(d, &od);
    long long p, s;
    if ((a == -1 || b == -1) && PyErr_Occurred())
        return -1;
    if (!oc && !od && !__builtin_mul_overflow(a, b, &p)) {
        if (!__builtin_add_overflow(sum->small, p, &s)) {
            sum->small = s;
            return 0;
        }
        PyObject *x = PyLong_FromLongLong(sum->small);
        if (x == NULL)
            return -1;
        int r = add_big(sum, x);
        Py_DECREF(x);
        sum->small = p;
        return r;
    }
    PyObject *x = PyNumber_Multiply(c, d);
    if (x == NULL)
        return -1;
    int r = add_big(sum, x);
    Py_DECREF(x);
    return r;
}

/* Adds the inner product of one mode to sum: 1, 0 when not congruent ints, -1 on error. */
static int walk(PyObject *c, PyObject *s, PyObject *d, Sum *sum, int depth)
{
    if (PyTuple_CheckExact(c)) {
        if (!PyTuple_CheckExact(s) || !PyTuple_CheckExact(d) || depth >= MAX_DEPTH)
            return 0;
        Py_ssize_t n = PyTuple_GET_SIZE(c);
        if (PyTuple_GET_SIZE(s) != n || PyTuple_GET_SIZE(d) != n)
            return 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            int r = walk(PyTuple_GET_ITEM(c, i), PyTuple_GET_ITEM(s, i), PyTuple_GET_ITEM(d, i),
                         sum, depth + 1);
            if (r != 1)
                return r;
        }
        return 1;
    }
    if (!PyLong_CheckExact(c) || !is_leaf(s, sum->static_int) || !is_leaf(d, sum->static_int))
        return 0;
    return add_product(sum, c, d) < 0 ? -1 : 1;
}

/* dot(crd, shape, stride); self is the static int type bound by make_dot. */
static PyObject *dot(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "dot() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    Sum sum = {0, NULL, self};
    int r = walk(args[0], args[1], args[2], &sum, 0);
    if (r != 1) {
        Py_XDECREF(sum.big);
        if (r < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    if (sum.big == NULL)
        return PyLong_FromLongLong(sum.small);
    if (sum.small != 0) {
        PyObject *x = PyLong_FromLongLong(sum.small);
        if (x == NULL || add_big(&sum, x) < 0) {
            Py_XDECREF(x);
            Py_DECREF(sum.big);
            return NULL;
        }
        Py_DECREF(x);
    }
    return sum.big;
}

static PyMethodDef dot_def = {
    "dot", (PyCFunction)(void (*)(void))dot, METH_FASTCALL,
    "dot(crd, shape, stride): the sum of c*d over congruent int leaves, else None.",
};

static PyObject *make_dot(PyObject *module, PyObject *static_int)
{
    (void)module;
    if (!PyType_Check(static_int) || !PyType_IsSubtype((PyTypeObject *)static_int, &PyLong_Type)) {
        PyErr_SetString(PyExc_TypeError, "make_dot() takes a subclass of int");
        return NULL;
    }
    return PyCFunction_NewEx(&dot_def, static_int, NULL);
}

static PyMethodDef methods[] = {
    {"make_dot", make_dot, METH_O,
     "make_dot(static_int): dot(crd, shape, stride), also taking static_int leaves in shape and "
     "stride."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dot",
                                    "The inner product of a natural coordinate (see _dot.c).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__dot(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH) < 0)
        Py_CLEAR(m);
    return m;
}
