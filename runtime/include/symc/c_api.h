/*===- c_api.h - libsymrt's C API ---------------------------------*- C -*-===
 *
 * Every function returns 0 on success and -1 on failure; symcGetLastError()
 * then holds MXNet's message and symcGetLastErrorKind() the Python exception
 * MXNet raises for it ("ValueError", "TypeError", "MXNetError", ...).
 * Handles are opaque; an NDArray handle shares storage with what it came from.
 *
 *===----------------------------------------------------------------------===*/
#ifndef SYMC_RUNTIME_C_API_H
#define SYMC_RUNTIME_C_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void *SymcArtifactHandle;
typedef void *SymcExecutorHandle;
typedef void *SymcNDArrayHandle;

const char *symcGetLastError(void);
const char *symcGetLastErrorKind(void);

int SymcArtifactLoad(const char *path, const char *prefix, SymcArtifactHandle *out);
int SymcArtifactFree(SymcArtifactHandle artifact);

/* A zero-filled cpu array; dtype is MXNet's code (0 = float32). */
int SymcNDArrayCreate(const int64_t *shape, int ndim, int dtype, SymcNDArrayHandle *out);
int SymcNDArrayFree(SymcNDArrayHandle array);
int SymcNDArrayGetShape(SymcNDArrayHandle array, int *ndim, const int64_t **shape);
int SymcNDArrayGetDType(SymcNDArrayHandle array, int *dtype);
int SymcNDArrayGetData(SymcNDArrayHandle array, void **data);

/* Symbol.simple_bind: shapes are concatenated in shape_data, shape_ndim[i]
   dims each. grad_req is "null", "write" or "add". */
int SymcExecutorSimpleBind(SymcArtifactHandle artifact, int dev_type, int dev_id, int num_shapes,
                           const char **names, const int64_t *shape_data, const int *shape_ndim,
                           const char *grad_req, SymcExecutorHandle *out);
/* Symbol.bind with lists in manifest order; the arrays are not copied. */
int SymcExecutorBind(SymcArtifactHandle artifact, int dev_type, int dev_id, int num_args,
                     SymcNDArrayHandle *args, int num_aux, SymcNDArrayHandle *aux,
                     const char *grad_req, SymcExecutorHandle *out);
int SymcExecutorForward(SymcExecutorHandle exec, int is_train);
/* executor.backward: head_grads by output position, NULL where none is given. */
int SymcExecutorBackward(SymcExecutorHandle exec, int num_head_grads, SymcNDArrayHandle *head_grads);
int SymcExecutorNumOutputs(SymcExecutorHandle exec, int *count);
int SymcExecutorGetOutput(SymcExecutorHandle exec, int index, SymcNDArrayHandle *out);
/* An argument or aux state by name. */
int SymcExecutorGetArray(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out);
/* An argument's gradient array by name; *out is NULL where none is kept. */
int SymcExecutorGetGrad(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out);
int SymcExecutorSetNumThreads(SymcExecutorHandle exec, int threads);
int SymcExecutorFree(SymcExecutorHandle exec);

/* mx.random.seed: the seed Dropout and rrelu draw from in later forwards. */
int SymcRandomSeed(uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
