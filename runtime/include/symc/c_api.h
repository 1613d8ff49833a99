/*===- c_api.h - libsymrt's C API ---------------------------------*- C -*-===
 *
 * The whole runtime for C callers (and the Python package, which is a thin
 * ctypes layer over it). Names are `Symc<Object><Verb>`.
 *
 * Errors: every function returns 0 on success and -1 on failure. The calling
 * thread's SymcGetLastError() then holds the message (MXNet's text where
 * MXNet has one) and SymcGetLastErrorKind() the Python exception MXNet raises
 * for it ("ValueError", "TypeError", "KeyError", "MXNetError", ...). Output
 * parameters are left untouched on failure.
 *
 * Ownership: every handle a function gives out is the caller's and is
 * released with the matching Free, in any order. An NDArray handle is a
 * reference sharing storage with what it came from: an executor's array
 * stays valid through its handle after the executor is freed. Strings and
 * shape pointers given out stay valid while the object they describe lives.
 *
 * Threads: an artifact is immutable once loaded and may be shared by any
 * number of executors on any threads. An executor (and its arrays) belongs
 * to one thread at a time: calls on one executor must not overlap. Errors are
 * per thread.
 *
 *===----------------------------------------------------------------------===*/
#ifndef SYMC_RUNTIME_C_API_H
#define SYMC_RUNTIME_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct SymcArtifact *SymcArtifactHandle;
typedef struct SymcExecutor *SymcExecutorHandle;
typedef struct SymcExecutorGroup *SymcExecutorGroupHandle;
typedef struct SymcExecutorManager *SymcExecutorManagerHandle;
typedef struct SymcOptimizer *SymcOptimizerHandle;
typedef struct SymcNDArray *SymcNDArrayHandle;
typedef struct SymcNDList *SymcNDListHandle;

/* The tensor lists of an artifact or executor, in MXNet's orders. */
typedef enum {
  SYMC_ARGUMENTS = 0,  /* list_arguments() */
  SYMC_AUX_STATES = 1, /* list_auxiliary_states() */
  SYMC_OUTPUTS = 2,    /* list_outputs() */
  SYMC_GRADIENTS = 3   /* the arguments whose gradient was compiled (--train) */
} SymcTensorList;

/* Device types, as MXNet numbers them. */
enum { SYMC_CPU = 1, SYMC_GPU = 2 };

/* grad_req codes, as MXNet numbers them (OpReqType). */
enum { SYMC_GRAD_NULL = 0, SYMC_GRAD_WRITE = 1, SYMC_GRAD_ADD = 3 };

const char *SymcGetLastError(void);
const char *SymcGetLastErrorKind(void);

/* symc's version ("0.2.0") and the artifact ABI version this runtime loads. */
int SymcGetVersion(const char **version, int *abi_version);

/* mx.random.seed: the seed Dropout and rrelu draw from in later forwards. */
int SymcRandomSeed(uint64_t seed);

/*--- Artifacts -------------------------------------------------------------*/

/* Loads a compiled model (`symc compile -o path`); prefix NULL means "symc".
   The file's seal is checked first: a truncated or modified artifact is an
   error, and none of its code runs. */
int SymcArtifactLoad(const char *path, const char *prefix, SymcArtifactHandle *out);
/* The same, refusing the file unless its seal holds `sha256` (hex, as `symc
   verify` prints it): a deployer's pin against a file whose seal was rewritten. */
int SymcArtifactLoadPinned(const char *path, const char *prefix, const char *sha256, SymcArtifactHandle *out);
/* Checks the seal of the artifact file at `path` without loading it; sets
   `sha256` (valid until the thread's next call) to the SHA-256 it holds, in hex. */
int SymcArtifactVerify(const char *path, const char **sha256);
int SymcArtifactFree(SymcArtifactHandle artifact);
/* The number of tensors in a list. */
int SymcArtifactNumTensors(SymcArtifactHandle artifact, SymcTensorList list, int *count);
/* One tensor as compiled: its name, shape (-1 for the dynamic batch dim) and
   MXNet dtype code (0 = float32). Any output pointer may be NULL. */
int SymcArtifactGetTensor(SymcArtifactHandle artifact, SymcTensorList list, int index,
                          const char **name, int *ndim, const int64_t **shape, int *dtype);
/* Whether the artifact has the training forward (is_train) and the backward. */
int SymcArtifactHasBackward(SymcArtifactHandle artifact, int *has_backward);
/* The symbol compiled for other shapes into the same file (`symc compile
   --shape data=?,3,224|320,224|320`): their number, and one of them as an
   artifact of its own (free it with SymcArtifactFree). Binding and reshaping
   an artifact choose the variant that fits the shapes. */
int SymcArtifactNumShapeVariants(SymcArtifactHandle artifact, int *count);
int SymcArtifactGetShapeVariant(SymcArtifactHandle artifact, int index, SymcArtifactHandle *out);
/* Whether the artifact or one of its shape variants runs these argument and
   aux state shapes (one batch size for all dynamic dims). */
int SymcArtifactFits(SymcArtifactHandle artifact, int num_shapes, const char **shape_names,
                     const int64_t *shape_data, const int *shape_ndim, int *fits);

/*--- NDArrays (C order; host memory, or a GPU's for gpu contexts) ---------*/

/* A zero-filled array in context dev_type/dev_id (host memory for every CPU
   context, device memory for gpu(i), through libsymrt_cuda); dtype is
   MXNet's code (0 = float32). */
int SymcNDArrayCreate(const int64_t *shape, int ndim, int dtype, int dev_type, int dev_id, SymcNDArrayHandle *out);
/* An array over the caller's memory, not copied: `data` must stay valid and
   64-byte alignment is not required. `release(data, release_arg)` is called
   when the last reference goes (NULL: the caller frees it after every handle
   and executor using it is gone). */
int SymcNDArrayCreateFromData(void *data, const int64_t *shape, int ndim, int dtype,
                              void (*release)(void *data, void *release_arg), void *release_arg,
                              SymcNDArrayHandle *out);
int SymcNDArrayFree(SymcNDArrayHandle array);
int SymcNDArrayGetShape(SymcNDArrayHandle array, int *ndim, const int64_t **shape);
int SymcNDArrayGetDType(SymcNDArrayHandle array, int *dtype);
/* The array's memory: a host pointer, or for a gpu(i) array a device
   pointer (as MXNDArrayGetData gives). Getting it counts as writing the
   array: an executor repacks a weight written since its last forward. Write
   through a pointer got before that forward only after getting it again.
   Memory the array wraps (SymcNDArrayCreateFromData) is repacked at every
   forward, since it may be written unseen. */
int SymcNDArrayGetData(SymcNDArrayHandle array, void **data);
/* Copies `size` elements (the array's size) between the array, in any
   context, and host memory `data`, as MXNDArraySyncCopyToCPU/FromCPU. */
int SymcNDArraySyncCopyToCPU(SymcNDArrayHandle array, void *data, size_t size);
int SymcNDArraySyncCopyFromCPU(SymcNDArrayHandle array, const void *data, size_t size);
int SymcNDArrayGetContext(SymcNDArrayHandle array, int *dev_type, int *dev_id);
/* dst[:] = src: same shape, the dtype converted. */
int SymcNDArrayCopyFrom(SymcNDArrayHandle dst, SymcNDArrayHandle src);

/*--- NDArray lists: .params files (mx.nd.load / mx.nd.save), shared buffers -*/

/* An empty list (a shared_buffer for SymcExecutorSimpleBindShared). */
int SymcNDListCreate(SymcNDListHandle *out);
/* Puts `array` (shared, not copied) under `name`, replacing an entry of that name. */
int SymcNDListSet(SymcNDListHandle list, const char *name, SymcNDArrayHandle array);
int SymcNDListLoad(const char *path, SymcNDListHandle *out);
int SymcNDListLoadFromBuffer(const void *bytes, size_t size, SymcNDListHandle *out);
int SymcNDListSize(SymcNDListHandle list, int *size);
/* Entry `index`: its name ("arg:fc1_weight" as stored; "" for a file saved
   without names) and a new handle sharing the array (NULL for a none array). */
int SymcNDListGet(SymcNDListHandle list, int index, const char **name, SymcNDArrayHandle *array);
int SymcNDListFree(SymcNDListHandle list);
/* mx.nd.save: names NULL saves an unnamed list. */
int SymcNDListSave(const char *path, int num, const char **names, SymcNDArrayHandle *arrays);

/*--- Executors ---------------------------------------------------------------*/

/* Symbol.simple_bind. `shape_names[i]` has `shape_ndim[i]` dims, concatenated
   in `shape_data`. grad_req takes MXNet's three forms:
     num_grad_req == 0:                        'write' for every argument;
     grad_req_names == NULL, num_grad_req == 1: grad_req_types[0] for all;
     grad_req_names == NULL, otherwise:         a list in argument order;
     grad_req_names != NULL:                    a dict (missing names: 'null').
   type_names/type_codes: type_dict (num_types may be 0). */
int SymcExecutorSimpleBind(SymcArtifactHandle artifact, int dev_type, int dev_id, int num_shapes,
                           const char **shape_names, const int64_t *shape_data, const int *shape_ndim,
                           int num_grad_req, const char **grad_req_names, const char **grad_req_types,
                           int num_types, const char **type_names, const int *type_codes,
                           SymcExecutorHandle *out);
/* group2ctx (model parallelism): the context of each `__ctx_group__`. */
typedef struct {
  const char *group;
  int dev_type, dev_id;
} SymcGroupContext;

/* simple_bind(shared_arg_names, shared_exec, shared_buffer, group2ctx): the named
   arguments (with their gradients) and every aux state are shared_exec's
   arrays; the other arguments come from shared_buffer (reused when large
   enough, else allocated and put in it); intermediate memory is reused from
   shared_exec. shared_exec and shared_buffer may be NULL. With group2ctx,
   each argument and aux state is allocated in its group's context (else in
   dev_type/dev_id) and the graph is placed as MXNet places it. */
int SymcExecutorSimpleBindShared(SymcArtifactHandle artifact, int dev_type, int dev_id, int num_shapes,
                                 const char **shape_names, const int64_t *shape_data, const int *shape_ndim,
                                 int num_grad_req, const char **grad_req_names, const char **grad_req_types,
                                 int num_types, const char **type_names, const int *type_codes,
                                 SymcExecutorHandle shared_exec, int num_shared_arg_names,
                                 const char **shared_arg_names, SymcNDListHandle shared_buffer,
                                 int num_groups, const SymcGroupContext *group2ctx, SymcExecutorHandle *out);
/* Symbol.bind with lists in manifest order; no array is copied. arg_grads may
   be NULL, or hold NULL where an argument has no gradient array (grad_req
   null then). grad_req holds one code per argument (NULL: write).
   shared_exec (may be NULL): its intermediate memory is reused. With
   group2ctx, the arrays may be in any context and the graph is placed. */
int SymcExecutorBind(SymcArtifactHandle artifact, int dev_type, int dev_id, int num_args,
                     SymcNDArrayHandle *args, SymcNDArrayHandle *arg_grads, const int *grad_req,
                     int num_aux, SymcNDArrayHandle *aux, SymcExecutorHandle shared_exec, int num_groups,
                     const SymcGroupContext *group2ctx, SymcExecutorHandle *out);
/* executor.reshape(partial_shaping, allow_up_sizing, **shapes), shapes as in
   SimpleBind: a new executor of the same artifact sharing exec's memory
   (they must not run concurrently). */
int SymcExecutorReshape(SymcExecutorHandle exec, int partial_shaping, int allow_up_sizing, int num_shapes,
                        const char **shape_names, const int64_t *shape_data, const int *shape_ndim,
                        SymcExecutorHandle *out);
/* The same onto `target`, an artifact of the same symbol compiled for the
   new shapes (when exec's artifact cannot run them). */
int SymcExecutorReshapeTo(SymcExecutorHandle exec, SymcArtifactHandle target, int partial_shaping,
                          int allow_up_sizing, int num_shapes, const char **shape_names, const int64_t *shape_data,
                          const int *shape_ndim, SymcExecutorHandle *out);
int SymcExecutorFree(SymcExecutorHandle exec);
int SymcExecutorForward(SymcExecutorHandle exec, int is_train);
/* Executor::PartialForward: runs step `step` of the graph's nodes in MXNet's
   order (variables included) and sets *step_left; step 0 runs the whole
   compiled forward, each step calls the monitor back for its node. */
int SymcExecutorPartialForward(SymcExecutorHandle exec, int is_train, int step, int *step_left);
/* executor.backward: head_grads by output position, NULL where none is given. */
int SymcExecutorBackward(SymcExecutorHandle exec, int num_head_grads, SymcNDArrayHandle *head_grads,
                         int is_train);
/* The bound arrays of a list: names as in the artifact, a new handle to each
   array (NULL for an argument without a gradient array in SYMC_GRADIENTS,
   which lists every argument here). */
int SymcExecutorNumTensors(SymcExecutorHandle exec, SymcTensorList list, int *count);
int SymcExecutorGetTensor(SymcExecutorHandle exec, SymcTensorList list, int index, const char **name,
                          SymcNDArrayHandle *array);
/* Shortcuts by name: an argument or aux state; a gradient (*out NULL where
   none is kept); an output by position. */
int SymcExecutorGetArray(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out);
int SymcExecutorGetGrad(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out);
int SymcExecutorNumOutputs(SymcExecutorHandle exec, int *count);
int SymcExecutorGetOutput(SymcExecutorHandle exec, int index, SymcNDArrayHandle *out);
/* The grad_req code of every argument, in argument order (count of them). */
int SymcExecutorGetGradReqs(SymcExecutorHandle exec, const int **grad_req);
/* executor.copy_params_from. */
int SymcExecutorCopyParamsFrom(SymcExecutorHandle exec, int num_args, const char **arg_names,
                               SymcNDArrayHandle *arg_arrays, int num_aux, const char **aux_names,
                               SymcNDArrayHandle *aux_arrays, int allow_extra_params);
/* copy_params_from a .params file ("arg:"/"aux:" names, as MXNet saves a
   checkpoint; a bare name is an argument). */
int SymcExecutorLoadParams(SymcExecutorHandle exec, const char *path, int allow_extra_params);
/* Threads the generated code uses (0: OMP_NUM_THREADS where set, else the CPUs
   this process may run on). */
int SymcExecutorSetNumThreads(SymcExecutorHandle exec, int threads);
/* The monitor callback: an array's MXNet name and a new handle to the array,
   which the callee owns (frees with SymcNDArrayFree), as MXNet's does. */
typedef void (*SymcMonitorCallback)(const char *name, SymcNDArrayHandle array, void *user);
/* executor.set_monitor_callback(callback, monitor_all): after each forward,
   every node's outputs in MXNet's node order and names (with monitor_all,
   each node's inputs first). NULL uninstalls it. */
int SymcExecutorSetMonitorCallback(SymcExecutorHandle exec, SymcMonitorCallback callback, void *user,
                                   int monitor_all);
/* executor.debug_str() (MXExecutorPrint); valid until the next call on exec. */
int SymcExecutorPrint(SymcExecutorHandle exec, const char **out);
/* executor.get_optimized_symbol(): symbol JSON that MXNet 1.9.1 loads. */
int SymcExecutorGetOptimizedSymbol(SymcExecutorHandle exec, const char **json);

/*--- Data-parallel executor groups (mxnet.executor_manager) -----------------*/

/* _split_input_slice(batch_size, work_load_list): device i gets rows
   [slices[2i], slices[2i+1]); ValueError "Too many slices. Some splits are
   empty." when one would get none. */
int SymcSplitInputSlice(int64_t batch_size, int num_devices, const double *work_load, int64_t *slices);
/* One executor per context (dev_types[i], dev_ids[i]) bound to its slice of
   the batch: the inputs' whole-batch shapes (batch on axis 0) are
   `input_names[i]` with `shape_ndim[i]` dims, concatenated in `shape_data`;
   `param_names` get gradients ('write'), every other argument none. With
   `shared` (NULL for none), executor i shares parameters, gradients, aux
   states and memory with that group's executor i (bucketing). */
int SymcExecutorGroupCreate(SymcArtifactHandle artifact, int num_contexts, const int *dev_types, const int *dev_ids,
                            const double *work_load, int num_inputs, const char **input_names,
                            const int64_t *shape_data, const int *shape_ndim, int num_params,
                            const char **param_names, SymcExecutorGroupHandle shared, SymcExecutorGroupHandle *out);
int SymcExecutorGroupFree(SymcExecutorGroupHandle group);
int SymcExecutorGroupNumExecutors(SymcExecutorGroupHandle group, int *count);
/* Executor `index` as a handle of its own (free it with SymcExecutorFree);
   and the rows of the batch it runs. */
int SymcExecutorGroupGetExecutor(SymcExecutorGroupHandle group, int index, SymcExecutorHandle *out);
int SymcExecutorGroupGetSlice(SymcExecutorGroupHandle group, int index, int64_t *begin, int64_t *end);
/* Copies each executor's rows of the named whole-batch arrays into its inputs. */
int SymcExecutorGroupLoadDataBatch(SymcExecutorGroupHandle group, int num, const char **names,
                                   SymcNDArrayHandle *arrays);
/* forward / backward on every executor at once, a thread each, sharing
   `threads` (set by SymcExecutorGroupSetNumThreads; 0: the hardware's). */
int SymcExecutorGroupForward(SymcExecutorGroupHandle group, int is_train);
int SymcExecutorGroupBackward(SymcExecutorGroupHandle group);
int SymcExecutorGroupSetNumThreads(SymcExecutorGroupHandle group, int threads);
/* Sums each parameter's gradient over the executors into every executor's
   gradient, in place (kvstore 'local'): each then holds the whole batch's. */
int SymcExecutorGroupAggregateGradients(SymcExecutorGroupHandle group);
/* The same, summed as kvstore `kvstore` sums: "local" in host memory,
   "device" on the GPUs (NCCL where each executor has a GPU of its own), "nccl"
   with NCCL only. */
int SymcExecutorGroupAggregateGradientsEx(SymcExecutorGroupHandle group, const char *kvstore);
/* set_params: copy_params_from on every executor. */
int SymcExecutorGroupSetParams(SymcExecutorGroupHandle group, int num_args, const char **arg_names,
                               SymcNDArrayHandle *arg_arrays, int num_aux, const char **aux_names,
                               SymcNDArrayHandle *aux_arrays, int allow_extra_params);
/* copy_to: the parameters and aux states averaged over the executors, put
   into `args` and `aux` (lists from SymcNDListCreate) by name. */
int SymcExecutorGroupCopyTo(SymcExecutorGroupHandle group, SymcNDListHandle args, SymcNDListHandle aux);

/* DataParallelExecutorManager: the group of the default bucket (the contexts,
   inputs and params as for SymcExecutorGroupCreate; work_load NULL: equal
   shares) and, with `sym_gen` (NULL for none), one group per bucket key,
   bound to the artifact sym_gen(key, user) returns (the manager keeps its
   own reference) and sharing the default group's parameters and memory. */
typedef SymcArtifactHandle (*SymcBucketArtifact)(const char *bucket_key, void *user);
int SymcExecutorManagerCreate(SymcArtifactHandle artifact, int num_contexts, const int *dev_types, const int *dev_ids,
                              const double *work_load, int num_inputs, const char **input_names,
                              const int64_t *shape_data, const int *shape_ndim, int num_params,
                              const char **param_names, SymcBucketArtifact sym_gen, void *user,
                              const char *default_bucket_key, SymcExecutorManagerHandle *out);
int SymcExecutorManagerFree(SymcExecutorManagerHandle manager);
/* Loads a batch into the group of `bucket_key` (NULL: the default), bound on
   first use for the batch's input shapes (`shape_*`, as for the group). */
int SymcExecutorManagerLoadDataBatch(SymcExecutorManagerHandle manager, const char *bucket_key, int num,
                                     const char **names, SymcNDArrayHandle *arrays, int num_shapes,
                                     const char **shape_names, const int64_t *shape_data, const int *shape_ndim);
/* The group of the batch loaded last, as a handle of its own (free it with
   SymcExecutorGroupFree): forward, backward and the rest run on it. */
int SymcExecutorManagerGetCurrentGroup(SymcExecutorManagerHandle manager, SymcExecutorGroupHandle *out);

/* The optimizer step on every executor's parameters (after
   SymcExecutorGroupAggregateGradients), MXNet's updater keys: parameter
   index * devices + device. */
int SymcExecutorGroupUpdate(SymcExecutorGroupHandle group, SymcOptimizerHandle optimizer);

/*--- Optimizers (mx.optimizer) ------------------------------------------------*/

/* mx.optimizer.SGD(learning_rate, momentum, wd, rescale_grad, clip_gradient;
   0 for no clipping), as sgd_update / sgd_mom_update compute it. */
int SymcOptimizerCreateSGD(float learning_rate, float momentum, float wd, float rescale_grad, float clip_gradient,
                           SymcOptimizerHandle *out);
int SymcOptimizerFree(SymcOptimizerHandle optimizer);
/* MXNet's learning-rate and weight-decay multipliers of the parameters
   `param_names`: wd_mult 0 for a name not ending in _weight or _gamma, then
   the __lr_mult__ / __wd_mult__ attributes of the variables of `symbol_json`
   (MXNet symbol JSON; NULL for none), then the explicit ones by name. */
int SymcOptimizerSetMultipliers(SymcOptimizerHandle optimizer, const char *symbol_json, int num_params,
                                const char **param_names, int num_lr, const char **lr_names, const float *lr_mult,
                                int num_wd, const char **wd_names, const float *wd_mult);
int SymcOptimizerSetLearningRate(SymcOptimizerHandle optimizer, float learning_rate);
/* The updater: one step on `weight` from `grad` (float32), the momentum kept
   under `index`; `name` picks the multipliers. */
int SymcOptimizerUpdate(SymcOptimizerHandle optimizer, int index, const char *name, SymcNDArrayHandle weight,
                        SymcNDArrayHandle grad);

#ifdef __cplusplus
}
#endif

#endif
