/*===- predict_lenet.c - a C program written against MXNet's predict API ---===
 *
 * Serving code as MXNet users write it (c_predict_api.h only), built once
 * against libmxnet and once against libsymc_predict; the test compares what
 * the two print. It runs LeNet on a synthetic digit: create, shapes and
 * types, set input, forward, outputs; reshape to a batch of 2; partial
 * forward; an internal layer's output (MXPredCreatePartialOut); two
 * predictors sharing parameters on two threads; an NDArray list; errors.
 *
 *   predict_lenet lenet-symbol.json lenet-0000.params
 *
 *===----------------------------------------------------------------------===*/
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mxnet/c_predict_api.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    if ((call) != 0) {                                                               \
      fprintf(stderr, "%s failed: %s\n", #call, MXGetLastError());                   \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static char *readFile(const char *path, int *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *bytes = malloc(n + 1);
  if (fread(bytes, 1, n, f) != (size_t)n)
    exit(1);
  bytes[n] = 0;
  fclose(f);
  *size = (int)n;
  return bytes;
}

static void digit(float *image, int batch) {
  for (int i = 0; i < batch * 28 * 28; ++i)
    image[i] = (float)((i * 7 + i / 28) % 23) / 23.0f;
}

static void printOutput(const char *label, PredictorHandle pred, uint32_t index) {
  uint32_t *shape, ndim, size = 1;
  CHECK(MXPredGetOutputShape(pred, index, &shape, &ndim));
  printf("%s shape", label);
  for (uint32_t d = 0; d < ndim; ++d) {
    printf(" %u", shape[d]);
    size *= shape[d];
  }
  int dtype = -1;
  CHECK(MXPredGetOutputType(pred, 0, &dtype));
  float *out = malloc(size * sizeof(float));
  CHECK(MXPredGetOutput(pred, index, out, size));
  printf(" dtype %d:", dtype);
  for (uint32_t i = 0; i < size && i < 20; ++i)
    printf(" %.6f", out[i]);
  printf("\n");
  free(out);
}

struct Job {
  PredictorHandle pred;
  float scale;
  float first;
};

static void *runJob(void *arg) {
  struct Job *job = arg;
  float image[28 * 28], out[10];
  digit(image, 1);
  for (int i = 0; i < 28 * 28; ++i)
    image[i] *= job->scale;
  CHECK(MXPredSetInput(job->pred, "data", image, 28 * 28));
  CHECK(MXPredForward(job->pred));
  CHECK(MXPredGetOutput(job->pred, 0, out, 10));
  job->first = out[0];
  return NULL;
}

/* Prints each monitored name with the step that reported it. The handle is
   not freed: MXNet's is freed with MXNDArrayFree, symc's with SymcNDArrayFree,
   neither in this header. */
static int monitorStep = -1;
static void printMonitored(const char *name, NDArrayHandle array, void *user) {
  (void)array;
  printf("%s step %d: %s\n", (const char *)user, monitorStep, name);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SYMBOL.json PARAMS\n", argv[0]);
    return 2;
  }
  int jsonSize, paramSize;
  char *json = readFile(argv[1], &jsonSize);
  char *params = readFile(argv[2], &paramSize);
  /* The label is an input too, so that MXPredReshape may change its batch. */
  const char *keys[2] = {"data", "softmax_label"};
  uint32_t indptr[3] = {0, 4, 5}, shape[5] = {1, 1, 28, 28, 1};
  PredictorHandle pred;
  CHECK(MXPredCreate(json, params, paramSize, 1, 0, 2, keys, indptr, shape, &pred));
  float image[2 * 28 * 28];
  digit(image, 2);
  CHECK(MXPredSetInput(pred, "data", image, 28 * 28));
  CHECK(MXPredForward(pred));
  printOutput("forward", pred, 0);

  int stepLeft = 1, steps = 0;
  for (int step = 0; stepLeft > 0; ++step, ++steps)
    CHECK(MXPredPartialForward(pred, step, &stepLeft));
  printOutput("partial forward", pred, 0);
  printf("partial forward steps: %d\n", steps);

  PredictorHandle monitored;
  CHECK(MXPredCreate(json, params, paramSize, 1, 0, 2, keys, indptr, shape, &monitored));
  CHECK(MXPredSetInput(monitored, "data", image, 28 * 28));
  CHECK(MXPredSetMonitorCallback(monitored, printMonitored, (void *)"monitor", false));
  stepLeft = 1;
  for (monitorStep = 0; stepLeft > 0; ++monitorStep)
    CHECK(MXPredPartialForward(monitored, monitorStep, &stepLeft));
  printOutput("monitored partial forward", monitored, 0);
  CHECK(MXPredSetMonitorCallback(monitored, printMonitored, (void *)"monitor_all", true));
  monitorStep = -1;
  CHECK(MXPredForward(monitored));
  CHECK(MXPredFree(monitored));

  uint32_t shape2[5] = {2, 1, 28, 28, 2};
  PredictorHandle pred2;
  CHECK(MXPredReshape(2, keys, indptr, shape2, pred, &pred2));
  CHECK(MXPredSetInput(pred2, "data", image, 2 * 28 * 28));
  CHECK(MXPredForward(pred2));
  printOutput("reshaped to batch 2", pred2, 0);
  CHECK(MXPredForward(pred)); /* the old predictor still works */
  printOutput("original after reshape", pred, 0);

  PredictorHandle partial;
  const char *outputKeys[1] = {"fc1"};
  CHECK(MXPredCreatePartialOut(json, params, paramSize, 1, 0, 1, keys, indptr, shape, 1, outputKeys,
                               &partial));
  CHECK(MXPredSetInput(partial, "data", image, 28 * 28));
  CHECK(MXPredForward(partial));
  printOutput("fc1", partial, 0);

  PredictorHandle threads[2];
  CHECK(MXPredCreateMultiThread(json, params, paramSize, 1, 0, 2, keys, indptr, shape, 2, threads));
  struct Job jobs[2] = {{threads[0], 0.5f, 0}, {threads[1], 0.5f, 0}};
  pthread_t ids[2];
  for (int i = 0; i < 2; ++i)
    pthread_create(&ids[i], NULL, runJob, &jobs[i]);
  for (int i = 0; i < 2; ++i)
    pthread_join(ids[i], NULL);
  printf("threads: %.6f %.6f\n", jobs[0].first, jobs[1].first);

  NDListHandle list;
  uint32_t length;
  CHECK(MXNDListCreate(params, paramSize, &list, &length));
  const char *key;
  const float *data;
  const uint32_t *listShape;
  uint32_t listNdim;
  CHECK(MXNDListGet(list, 0, &key, &data, &listShape, &listNdim));
  printf("ndlist: %u arrays, first %s ndim %u dim0 %u value %.6f\n", length, key, listNdim, listShape[0], data[0]);
  CHECK(MXNDListFree(list));

  printf("bad key: %d\n", MXPredSetInput(pred, "nope", image, 28 * 28));
  printf("bad size: %d\n", MXPredSetInput(pred, "data", image, 3));
  printf("bad index: %d\n", MXPredGetOutput(pred, 5, image, 10));

  for (int i = 0; i < 2; ++i)
    CHECK(MXPredFree(threads[i]));
  CHECK(MXPredFree(partial));
  CHECK(MXPredFree(pred2));
  CHECK(MXPredFree(pred));
  free(json);
  free(params);
  return 0;
}
