/* The inner product of a natural coordinate with a stride: the hot loop of cute.crd2idx and
 * Layout.__call__, in C (optional: without it, cute.coords._dot, the reference, runs).
 *
 * make_dot(static_int) returns dot(crd, shape, stride), a METH_FASTCALL function with the
 * contract of cute.coords._dot: the sum of c*d over the leaves when crd, shape and stride
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
 *
 * make_well_formed(static_int) returns well_formed(shape, stride), the check of every
 * Layout(shape, stride) a user builds, with the contract of cute.layout._well_formed(shape,
 * stride, 0): True when shape and stride are congruent (exact tuples of equal lengths, no tuple
 * at MAX_DEPTH levels or deeper) with leaves that are exact ints or static_int instances, every
 * shape leaf >= 0; else False. It never raises for a two-argument call.
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

/* 1 when (s, d) is a well-formed shape/stride pair at nesting level `level`, else 0. */
static int well_formed_at(PyObject *s, PyObject *d, PyObject *static_int, int level)
{
    if (PyTuple_CheckExact(s)) {
        if (!PyTuple_CheckExact(d) || level >= MAX_DEPTH)
            return 0;
        Py_ssize_t n = PyTuple_GET_SIZE(s);
        if (PyTuple_GET_SIZE(d) != n)
            return 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (!well_formed_at(PyTuple_GET_ITEM(s, i), PyTuple_GET_ITEM(d, i), static_int, level + 1))
                return 0;
        return 1;
    }
    if (!is_leaf(s, static_int) || !is_leaf(d, static_int))
        return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(s, &overflow);
    if (v == -1 && PyErr_Occurred()) { /* not reached for an int; stay total all the same */
        PyErr_Clear();
        return 0;
    }
    return overflow > 0 || (overflow == 0 && v >= 0);
}

/* well_formed(shape, stride); self is the static int type bound by make_well_formed. */
static PyObject *well_formed(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "well_formed() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    return PyBool_FromLong(well_formed_at(args[0], args[1], self, 0));
}

static PyMethodDef well_formed_def = {
    "well_formed", (PyCFunction)(void (*)(void))well_formed, METH_FASTCALL,
    "well_formed(shape, stride): congruent int leaves, shape leaves >= 0, bounded nesting.",
};

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

static PyObject *make_well_formed(PyObject *module, PyObject *static_int)
{
    (void)module;
    if (!PyType_Check(static_int) || !PyType_IsSubtype((PyTypeObject *)static_int, &PyLong_Type)) {
        PyErr_SetString(PyExc_TypeError, "make_well_formed() takes a subclass of int");
        return NULL;
    }
    return PyCFunction_NewEx(&well_formed_def, static_int, NULL);
}

static PyMethodDef methods[] = {
    {"make_well_formed", make_well_formed, METH_O,
     "make_well_formed(static_int): well_formed(shape, stride), the check of a user-built Layout."},
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
