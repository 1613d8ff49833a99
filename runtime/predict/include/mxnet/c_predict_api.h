/*===- c_predict_api.h - MXNet 1.9's predict API, served by symc ---*- C -*-===
 *
 * The declarations of MXNet 1.9.1's include/mxnet/c_predict_api.h, so that
 * serving code written against MXNet compiles and links against
 * libsymc_predict unchanged. The symbol JSON given to MXPredCreate* names a
 * model compiled ahead of time (`symc compile --predict-dir`), found in
 * SYMC_ARTIFACT_PATH; README.md ("MXNet's C predict API") says how, and what
 * differs from MXNet.
 *
 *===----------------------------------------------------------------------===*/
#ifndef MXNET_C_PREDICT_API_H_
#define MXNET_C_PREDICT_API_H_

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MXNET_DLL __attribute__((visibility("default")))

typedef uint32_t mx_uint;
typedef float mx_float;
typedef void *PredictorHandle;
typedef void *NDListHandle;
typedef void *NDArrayHandle;
typedef void (*PredMonitorCallback)(const char *, NDArrayHandle, void *);

/* The message of the calling thread's last failed call. */
MXNET_DLL const char *MXGetLastError();

/* A predictor (inference only) for a symbol with its parameters (the bytes of
   a .params file) and the shapes of its inputs in CSR form: input i has dims
   input_shape_data[input_shape_indptr[i] .. input_shape_indptr[i+1]).
   dev_type 1 = cpu. */
MXNET_DLL int MXPredCreate(const char *symbol_json_str, const void *param_bytes, int param_size,
                           int dev_type, int dev_id, uint32_t num_input_nodes, const char **input_keys,
                           const uint32_t *input_shape_indptr, const uint32_t *input_shape_data,
                           PredictorHandle *out);
/* As MXPredCreate, with the dtypes (MXNet codes) of inputs that have no parameter. */
MXNET_DLL int MXPredCreateEx(const char *symbol_json_str, const void *param_bytes, int param_size,
                             int dev_type, int dev_id, const uint32_t num_input_nodes,
                             const char **input_keys, const uint32_t *input_shape_indptr,
                             const uint32_t *input_shape_data, const uint32_t num_provided_arg_dtypes,
                             const char **provided_arg_dtype_names, const int *provided_arg_dtypes,
                             PredictorHandle *out);
/* As MXPredCreate, with the outputs of the nodes named in output_keys
   (outputs named "<key>_output") instead of the symbol's heads. */
MXNET_DLL int MXPredCreatePartialOut(const char *symbol_json_str, const void *param_bytes, int param_size,
                                     int dev_type, int dev_id, uint32_t num_input_nodes,
                                     const char **input_keys, const uint32_t *input_shape_indptr,
                                     const uint32_t *input_shape_data, uint32_t num_output_nodes,
                                     const char **output_keys, PredictorHandle *out);
/* num_threads predictors sharing one copy of the parameters, one per thread. */
MXNET_DLL int MXPredCreateMultiThread(const char *symbol_json_str, const void *param_bytes, int param_size,
                                      int dev_type, int dev_id, uint32_t num_input_nodes,
                                      const char **input_keys, const uint32_t *input_shape_indptr,
                                      const uint32_t *input_shape_data, int num_threads,
                                      PredictorHandle *out);
/* A new predictor for new input shapes, sharing the parameters of `handle`
   (which stays usable). */
MXNET_DLL int MXPredReshape(uint32_t num_input_nodes, const char **input_keys,
                            const uint32_t *input_shape_indptr, const uint32_t *input_shape_data,
                            PredictorHandle handle, PredictorHandle *out);
/* The shape of output `index`, valid until the next call on the predictor. */
MXNET_DLL int MXPredGetOutputShape(PredictorHandle handle, uint32_t index, uint32_t **shape_data,
                                   uint32_t *shape_ndim);
/* Stores the dtype code of output out_index in out_dtype[out_index] (as MXNet does). */
MXNET_DLL int MXPredGetOutputType(PredictorHandle handle, uint32_t out_index, int *out_dtype);
/* Copies `size` elements, in the input's own dtype, into input `key`. */
MXNET_DLL int MXPredSetInput(PredictorHandle handle, const char *key, const float *data, uint32_t size);
MXNET_DLL int MXPredForward(PredictorHandle handle);
/* Runs forward step `step`; *step_left is the number of steps after it. */
MXNET_DLL int MXPredPartialForward(PredictorHandle handle, int step, int *step_left);
/* Copies output `index` (`size` elements, in its own dtype) into data. */
MXNET_DLL int MXPredGetOutput(PredictorHandle handle, uint32_t index, float *data, uint32_t size);
/* Calls `callback` with each node's outputs (with monitor_all, each node's
   inputs first) in MXNet's order and names after every MXPredForward, and
   for its node after each MXPredPartialForward step. The NDArrayHandle is a
   SymcNDArrayHandle (symc/c_api.h) over the predictor's memory, valid while
   the predictor lives; the callee owns it and frees it with SymcNDArrayFree,
   as an MXNet callee frees its handle with MXNDArrayFree. */
MXNET_DLL int MXPredSetMonitorCallback(PredictorHandle handle, PredMonitorCallback callback,
                                       void *callback_handle, bool monitor_all);
MXNET_DLL int MXPredFree(PredictorHandle handle);
/* Reads an NDArray file (e.g. a mean image) from memory, as float32 arrays. */
MXNET_DLL int MXNDListCreate(const char *nd_file_bytes, int nd_file_size, NDListHandle *out,
                             uint32_t *out_length);
MXNET_DLL int MXNDListGet(NDListHandle handle, uint32_t index, const char **out_key,
                          const float **out_data, const uint32_t **out_shape, uint32_t *out_ndim);
MXNET_DLL int MXNDListFree(NDListHandle handle);

#ifdef __cplusplus
}
#endif

#endif
