/*===- ArtifactABI.h - the contract between generated code and libsymrt -*- C -*-===
 *
 * Included by the code generator (which writes artifacts) and by the runtime
 * (which loads them). An artifact exports, under its prefix (default "symc"):
 *
 *   const char *<prefix>_manifest(void);        the JSON manifest
 *   int32_t <prefix>_prepare(...);               the prepared arrays (packed
 *                                                weights), where listed
 *   int32_t <prefix>_forward(...);               forward(is_train=False)
 *   int32_t <prefix>_forward_train(...);         forward(is_train=True), --train
 *   int32_t <prefix>_backward(...);              the gradients, --train
 *   const uint8_t *<prefix>_params(int64_t *);   the .params file, --embed-params
 *
 * Every entry point is a SymcEntryPoint: `buffers` are the arguments, aux
 * states and outputs in manifest order (the inference forward then the
 * prepared arrays of the manifest's "prepare", which the prepare entry
 * writes from the arguments and aux states, and reruns only when those it
 * reads change; the training forward then the saved values; the backward:
 * arguments, aux states, head gradients, saved values, gradients, aux
 * updates), `dims[0]` the batch size of the manifest's -1
 * dims, `dims[1]` the step seed of ops that draw random numbers,
 * `workspace` an arena of the manifest's workspace_bytes, and `error` where
 * the code reports a failed run-time check (an index out of bounds where
 * MXNet raises). 0 means success; otherwise error->check numbers the
 * manifest's "checks" entry that failed.
 *
 *===----------------------------------------------------------------------===*/
#ifndef SYMC_ARTIFACT_ABI_H
#define SYMC_ARTIFACT_ABI_H

#include <stdint.h>

/* Bumped whenever the entry-point signature or the manifest layout changes. */
#define SYMC_ARTIFACT_ABI_VERSION 9

/* A failed run-time check: `check` numbers the manifest's "checks" entry
   from 1 (0: none failed), `values` are what its message reports ({0}, {1},
   {2}). The first check to fail in a run is kept. */
typedef struct {
  int64_t check;
  int64_t values[3];
} SymcRunError;

typedef int32_t (*SymcEntryPoint)(void *const *buffers, const int64_t *dims, void *workspace, SymcRunError *error);

/* A float32 buffer as MLIR's memref lowering describes it: `rank` sizes,
   then `rank` strides (in elements) follow the offset. */
typedef struct {
  float *allocated;
  float *aligned; /* the data start at aligned + offset */
  int64_t offset;
  int64_t sizes_and_strides[];
} SymcMemRefF32;

/* Generated code runs each parallel loop through libsymrt's threads:
   body(context, begin, end) runs iterations [begin, end) of [0, count), each
   range on one thread, the calling thread among them; symcParallelFor
   returns when all are done. libsymrt defines it (the loader resolves an
   artifact's call there: libsymrt is loaded before any artifact, and a
   program that links an artifact's object links libsymrt). */
typedef void (*SymcParallelBody)(void *context, int64_t begin, int64_t end);
#ifdef __cplusplus
extern "C"
#endif
void symcParallelFor(SymcParallelBody body, void *context, int64_t count);

/* CUDA artifacts (symc compile --target cuda) launch their kernels through
   libsymrt_cuda and call it for GEMMs: C += A B of row-major float32
   matrices in device memory (rank 2), or of stacks of them (rank 3; a
   rank-2 A or B is shared by every product of the stack), each buffer an
   unranked memref (its rank, then its descriptor), on the stream of the
   executor's run. A and B may also be column-major, transposed views
   whose rows' stride is 1. A failure fails the run. */
#ifdef __cplusplus
extern "C"
#endif
void symcCudaGemm(int64_t rank_a, const SymcMemRefF32 *a, int64_t rank_b, const SymcMemRefF32 *b, int64_t rank_c,
                  const SymcMemRefF32 *c);

/* The most bytes one array may take: the compiler refuses larger shapes, and
   the runtime's readers larger arrays and manifest sizes (far past any
   memory, and the sum of two still fits in int64). */
#define SYMC_MAX_ARRAY_BYTES (INT64_C(1) << 62)

#define SYMC_ARTIFACT_SEAL_MAGIC "SYMCSEAL"

/* The last 48 bytes of an artifact file (little-endian). */
typedef struct {
  uint8_t sha256[32];    /* of the file's first sealed_bytes bytes */
  uint64_t sealed_bytes; /* the file's size less this seal */
  char magic[8];         /* SYMC_ARTIFACT_SEAL_MAGIC, without its NUL */
} SymcArtifactSeal;

#endif
