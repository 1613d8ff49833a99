//===- Executor.cpp - MXNet's Executor over a compiled artifact -----------===//
#include "symc/Executor.h"

#include "Device.h"
#include "Placement.h"
#include "SymbolGraph.h"
#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace symc {
namespace {

std::atomic<uint64_t> randomSeed{0}, randomDraws{0};

/// The seed of the next forward: the user's seed and a count of forwards,
/// mixed by splitmix64 (the generated code hashes it with each node's name).
int64_t nextStepSeed() {
  uint64_t z = randomSeed.load() + (randomDraws.fetch_add(1) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<int64_t>(z ^ (z >> 31));
}

[[noreturn]] void raise(const char *kind, const std::string &message) { throw Error(kind, message); }

std::vector<std::string> namesOf(const std::vector<TensorSpec> &specs) {
  std::vector<std::string> names;
  for (const TensorSpec &s : specs)
    names.push_back(s.name);
  return names;
}

/// bind's args / aux_states: every name is required.
std::vector<NDArray> requiredArrays(const Arrays &given, const std::vector<TensorSpec> &specs,
                                    const char *what, const char *lengthMessage) {
  if (auto *list = std::get_if<ArrayList>(&given)) {
    if (list->size() != specs.size())
      raise("ValueError", lengthMessage);
    for (const NDArray &a : *list)
      if (a.isNone())
        raise("TypeError", "Only accept list of NDArrays or dict of str to NDArray");
    return *list;
  }
  const ArrayDict &dict = std::get<ArrayDict>(given);
  std::vector<NDArray> arrays;
  for (const TensorSpec &spec : specs) {
    auto it = dict.find(spec.name);
    if (it == dict.end())
      raise("ValueError", "key `" + spec.name + "` is missing in `" + what + "`");
    arrays.push_back(it->second);
  }
  return arrays;
}

/// bind's args_grad: any entry may be missing (a none array).
std::vector<NDArray> optionalArrays(const std::optional<Arrays> &given,
                                    const std::vector<TensorSpec> &specs) {
  std::vector<NDArray> arrays(specs.size());
  if (!given)
    return arrays;
  if (auto *list = std::get_if<ArrayList>(&*given)) {
    if (list->size() != specs.size())
      raise("ValueError", "Length of args_grad does not match the number of arguments");
    return *list;
  }
  const ArrayDict &dict = std::get<ArrayDict>(*given);
  for (size_t i = 0; i < specs.size(); ++i)
    if (auto it = dict.find(specs[i].name); it != dict.end())
      arrays[i] = it->second;
  return arrays;
}

bool parseReq(const std::string &text, GradReq &req) {
  if (text == "null")
    req = GradReq::Null;
  else if (text == "write")
    req = GradReq::Write;
  else if (text == "add")
    req = GradReq::Add;
  else
    return false;
  return true;
}

/// Symbol.bind's grad_req handling (Python side).
std::vector<GradReq> bindGradReqs(const GradReqSpec &spec, const std::vector<TensorSpec> &args) {
  std::vector<GradReq> reqs(args.size(), GradReq::Null);
  if (auto *one = std::get_if<std::string>(&spec)) {
    GradReq req;
    if (!parseReq(*one, req))
      raise("ValueError", "grad_req must be in {'null': 0, 'write': 1, 'add': 3}");
    std::fill(reqs.begin(), reqs.end(), req);
  } else if (auto *list = std::get_if<std::vector<std::string>>(&spec)) {
    for (size_t i = 0; i < list->size() && i < reqs.size(); ++i)
      if (!parseReq((*list)[i], reqs[i]))
        raise("KeyError", "'" + (*list)[i] + "'");
  } else {
    const auto &dict = std::get<std::map<std::string, std::string>>(spec);
    for (size_t i = 0; i < args.size(); ++i)
      if (auto it = dict.find(args[i].name); it != dict.end() && !parseReq(it->second, reqs[i]))
        raise("KeyError", "'" + it->second + "'");
  }
  return reqs;
}

/// simple_bind's grad_req handling (C API side, MXExecutorSimpleBindEx).
std::vector<GradReq> simpleBindGradReqs(const GradReqSpec &spec, const std::vector<TensorSpec> &args) {
  if (auto *one = std::get_if<std::string>(&spec)) {
    GradReq req;
    if (!parseReq(*one, req))
      raise("MXNetError", "grad_req=" + *one +
                              " is not a valid input in simple_bind; only 'null', 'write', and "
                              "'add' are supported");
    return std::vector<GradReq>(args.size(), req);
  }
  if (auto *list = std::get_if<std::vector<std::string>>(&spec)) {
    if (list->empty())
      raise("RuntimeError", "grad_req in simple_bind cannot be an empty list");
    if (list->size() != args.size())
      raise("MXNetError",
            "The length of grad_req list does not match the number of input arguments in "
            "simple_bind, expected " + std::to_string(args.size()) + ", provided " +
                std::to_string(list->size()));
  } else if (std::get<std::map<std::string, std::string>>(spec).empty()) {
    raise("RuntimeError", "grad_req in simple_bind cannot be an empty dict");
  }
  return bindGradReqs(spec, args);
}

/// The position of `name` in `specs`, or -1.
int indexOf(const std::vector<TensorSpec> &specs, const std::string &name) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name)
      return static_cast<int>(i);
  return -1;
}

/// The compiled shape; a dynamic dim (-1) is the batch size, when known.
std::string shapeOfSpec(const TensorSpec &spec, int64_t batch) {
  std::string text = shapeToString(spec.shape);
  if (spec.isDynamic() && batch >= 0)
    text += " with the batch size (-1) already bound to " + std::to_string(batch);
  return text;
}

/// simple_bind's shape with its 0 dims (MXNet: unknown, to be inferred)
/// taken from the compiled shape.
std::vector<int64_t> knownDims(const TensorSpec &spec, std::vector<int64_t> shape) {
  for (size_t d = 0; d < shape.size() && d < spec.shape.size(); ++d)
    if (shape[d] == 0 && spec.shape[d] >= 0)
      shape[d] = spec.shape[d];
  return shape;
}

/// The compiled shape with its dynamic dims set to `batch`.
std::vector<int64_t> resolveShape(const TensorSpec &spec, int64_t batch) {
  std::vector<int64_t> shape = spec.shape;
  std::replace(shape.begin(), shape.end(), int64_t(-1), batch);
  return shape;
}

/// The shapes of bind's arrays, by name.
ShapeDict shapesOf(const Arrays &arrays, const std::vector<TensorSpec> &specs) {
  ShapeDict shapes;
  if (const auto *dict = std::get_if<ArrayDict>(&arrays))
    for (const auto &[name, array] : *dict)
      shapes[name] = array.shape();
  else
    for (size_t i = 0; i < std::get<ArrayList>(arrays).size() && i < specs.size(); ++i)
      shapes[specs[i].name] = std::get<ArrayList>(arrays)[i].shape();
  return shapes;
}

} // namespace

void seedRandom(uint64_t seed) {
  randomSeed = seed;
  randomDraws = 0;
}

Executor::Executor(std::shared_ptr<const Artifact> artifact, Context ctx)
    : loaded_(artifact), artifact_(std::move(artifact)), ctx_(ctx) {
  const std::string &device = artifact_->manifest().device;
  bool gpu = ctx.devType == Context::kGPU;
  if (gpu != artifact_->manifest().runsOnGpu())
    raise("MXNetError", gpu ? "this artifact was compiled for the CPU; bind it with ctx=cpu(), not " + ctx.str() +
                                  " (symc compile --target cuda compiles for a GPU)"
                            : "this artifact was compiled for " + device + "; bind it with ctx=gpu(i), not " +
                                  ctx.str());
  if (gpu)
    stream_ = std::make_shared<DeviceStream>(ctx);
}

void Executor::checkArray(const TensorSpec &spec, const NDArray &array, const char *what) {
  if (group2ctx_.empty() && array.context() != ctx_)
    raise("MXNetError", std::string(what) + " array is in " + array.context().str() +
                            " while binding with ctx=" + ctx_.str() + ". All " +
                            (std::string(what) == "Input" ? "arguments" : "gradients") +
                            " must be in global context (" + ctx_.str() +
                            ") unless group2ctx is specified for cross-device graph.");
  int64_t batch = batch_;
  if (!spec.fits(array.shape(), batch))
    raise("MXNetError", "Shape inconsistent for '" + spec.name + "': provided " +
                            shapeToString(array.shape()) + ", compiled " + shapeOfSpec(spec, batch_) +
                            " (recompile with --shape " + spec.name + "=... for other shapes)");
  batch_ = batch;
  if (array.dtype() != spec.dtype)
    raise("MXNetError", std::string("Type inconsistent for '") + spec.name + "': provided " +
                            dtypeName(array.dtype()) + ", compiled " + dtypeName(spec.dtype));
}

namespace {

size_t elementCount(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// shared_exec's array of `spec`, which must have exactly the needed shape.
NDArray sharedArray(const ArrayDict &arrays, const TensorSpec &spec, const std::vector<int64_t> &shape,
                    const char *kind) {
  auto it = arrays.find(spec.name);
  if (it == arrays.end() || it->second.shape() != shape || it->second.dtype() != spec.dtype)
    raise("MXNetError", std::string("Inferred shape does not match shared_exec.") + kind +
                            "_array's shape Therefore, the allocated memory for shared_exec." + kind +
                            "_array cannot be resued for creating NDArray of the argument " + spec.name +
                            " for the current executor");
  return it->second;
}

/// exec_utils.h ReshapeOrCreate: shared_buffer's array when large enough
/// (a view), else a new one, which replaces (or joins) the buffer's entry.
NDArray reshapeOrCreate(ArrayDict *buffer, const std::string &name, const std::vector<int64_t> &shape, DType dtype,
                        Context ctx) {
  if (!buffer)
    return NDArray(shape, dtype, ctx);
  auto it = buffer->find(name);
  if (it != buffer->end() && it->second.dtype() == dtype && elementCount(shape) <= it->second.size())
    return it->second.viewPrefix(shape);
  if (it != buffer->end())
    std::fprintf(stderr,
                 "symc: Bucketing: data %s has a shape %s, which is larger than already allocated shape %s. Need to "
                 "re-allocate. Consider putting default bucket key to be the bucket taking the largest input for "
                 "better memory sharing.\n",
                 name.c_str(), shapeToString(shape).c_str(), shapeToString(it->second.shape()).c_str());
  NDArray created(shape, dtype, ctx);
  (*buffer)[name] = created;
  return created;
}

/// A buffer for `spec`: a view of `pool[index]` when that is large enough
/// (memory shared with the executor this one was reshaped from), else new.
NDArray sharedOrNew(const TensorSpec &spec, int64_t batch, Context ctx, const std::vector<NDArray> *pool,
                    size_t index) {
  std::vector<int64_t> shape = resolveShape(spec, batch);
  if (pool && index < pool->size() && (*pool)[index].dtype() == spec.dtype &&
      (*pool)[index].size() >= elementCount(shape))
    return (*pool)[index].viewPrefix(shape);
  return NDArray(shape, spec.dtype, ctx);
}

} // namespace

void Executor::finishBinding(const Executor *shared) {
  auto pool = [&](const std::vector<NDArray> Executor::*member) { return shared ? &(shared->*member) : nullptr; };
  for (size_t i = 0; i < manifest().outputs.size(); ++i) {
    Context ctx = placement_ ? placement_->contexts.at(graph().heads.at(i).node.get()) : ctx_;
    outputs_.push_back(sharedOrNew(manifest().outputs[i], batch_, ctx, pool(&Executor::outputs_), i));
  }
  dims_ = {batch_, 0};
  // Bound arrays are never replaced (forward copies into them), so the
  // frame of buffer pointers is built once.
  for (auto *group : {&args_, &aux_, &outputs_})
    for (const NDArray &a : *group)
      frame_.push_back(a.data());
  bindPrepared();
  // A reshaped executor runs in its parent's workspace where it fits.
  size_t workspaceBytes = manifest().workspaceFor(batch_);
  workspace_ = shared && shared->workspace_.nbytes() >= workspaceBytes
                   ? shared->workspace_
                   : NDArray({static_cast<int64_t>(workspaceBytes)}, DType::UInt8, ctx_);
  if (!manifest().backward)
    return;
  checkCompiledGradients();
  const BackwardSpec &b = *manifest().backward;
  for (auto [specs, arrays, member] :
       {std::tuple{&b.headGradients, &headGrads_, &Executor::headGrads_}, std::tuple{&b.saved, &saved_, &Executor::saved_},
        std::tuple{&b.auxUpdates, &auxUpdates_, &Executor::auxUpdates_}})
    for (size_t i = 0; i < specs->size(); ++i)
      arrays->push_back(sharedOrNew((*specs)[i], batch_, ctx_, pool(member), i));
  // A gradient written (grad_req write) into an array of its dtype is
  // computed in place there: no buffer of its own, no copy after backward.
  for (const TensorSpec &spec : b.gradients) {
    size_t arg = indexOf(manifest().arguments, spec.name);
    bool inPlace = gradReqs_[arg] == GradReq::Write && !grads_[arg].isNone() && grads_[arg].dtype() == spec.dtype;
    // Not shared with a parent: its in-place gradients are the caller's arrays.
    computedGrads_.push_back(inPlace ? grads_[arg] : NDArray(resolveShape(spec, batch_), spec.dtype, ctx_));
  }
  trainingFrame_.assign(frame_.begin(), frame_.end() - prepared_.size());
  for (const NDArray &a : saved_)
    trainingFrame_.push_back(a.data());
  for (auto *group : {&args_, &aux_, &headGrads_, &saved_, &computedGrads_, &auxUpdates_})
    for (const NDArray &a : *group)
      backwardFrame_.push_back(a.data());
}

/// The prepared arrays (not shared with a parent executor: a reshape may
/// pick a shape variant that prepares other arrays), which the forward's
/// frame ends with.
void Executor::bindPrepared() {
  if (!manifest().prepare)
    return;
  for (auto *group : {&args_, &aux_})
    for (const NDArray &a : *group)
      prepareFrame_.push_back(a.data());
  for (const PreparedArraySpec &array : manifest().prepare->arrays) {
    prepared_.emplace_back(array.spec.shape, array.spec.dtype, ctx_);
    prepareFrame_.push_back(prepared_.back().data());
    frame_.push_back(prepared_.back().data());
    preparedInputs_.insert(preparedInputs_.end(), array.inputs.begin(), array.inputs.end());
  }
  std::sort(preparedInputs_.begin(), preparedInputs_.end());
  preparedInputs_.erase(std::unique(preparedInputs_.begin(), preparedInputs_.end()), preparedInputs_.end());
}

void Executor::prepareIfStale() {
  if (!manifest().prepare)
    return;
  auto versionOf = [&](size_t input) {
    return input < args_.size() ? args_[input].version() : aux_[input - args_.size()].version();
  };
  bool fresh = preparedVersions_.size() == preparedInputs_.size();
  for (size_t i = 0; fresh && i < preparedInputs_.size(); ++i)
    fresh = versionOf(preparedInputs_[i]) == preparedVersions_[i];
  if (fresh)
    return;
  call(manifest().prepare->entry, prepareFrame_.data());
  preparedVersions_.clear(); // recorded once the run succeeded
  for (size_t input : preparedInputs_)
    preparedVersions_.push_back(versionOf(input));
}

Executor Executor::forShapes(const std::shared_ptr<const Artifact> &artifact, Context ctx, const ShapeDict &shapes) {
  std::shared_ptr<const Artifact> fitting = Artifact::forShapes(artifact, shapes);
  Executor exec(fitting ? fitting : artifact, ctx); // binding names what does not fit
  exec.loaded_ = artifact;
  return exec;
}

Executor Executor::bind(std::shared_ptr<const Artifact> artifact, Context ctx, const Arrays &args,
                        const std::optional<Arrays> &argsGrad, const GradReqSpec &gradReq,
                        const std::optional<Arrays> &auxStates, const Executor *sharedExec,
                        const GroupContexts &group2ctx) {
  Executor exec = forShapes(artifact, ctx, shapesOf(args, artifact->manifest().arguments));
  exec.group2ctx_ = group2ctx;
  const Manifest &m = exec.manifest();
  exec.args_ = requiredArrays(args, m.arguments, "args",
                              "Length of args does not match the number of arguments");
  exec.grads_ = optionalArrays(argsGrad, m.arguments);
  exec.gradReqs_ = bindGradReqs(gradReq, m.arguments);
  exec.aux_ = requiredArrays(auxStates ? *auxStates : Arrays(ArrayList{}), m.auxStates, "aux_states",
                             "Length of aux_states does not match the number of arguments");
  for (size_t i = 0; i < m.arguments.size(); ++i) {
    exec.checkArray(m.arguments[i], exec.args_[i], "Input");
    // A missing gradient array forces grad_req null, as MXExecutorBindEX does.
    if (exec.grads_[i].isNone())
      exec.gradReqs_[i] = GradReq::Null;
    else
      exec.checkArray(m.arguments[i], exec.grads_[i], "Gradient");
  }
  for (size_t i = 0; i < m.auxStates.size(); ++i)
    exec.checkArray(m.auxStates[i], exec.aux_[i], "Input");
  exec.placeDevices();
  exec.finishBinding(sharedExec);
  return exec;
}

Executor Executor::simpleBind(std::shared_ptr<const Artifact> artifact, Context ctx,
                              const std::map<std::string, std::vector<int64_t>> &shapes,
                              const GradReqSpec &gradReq, const std::map<std::string, DType> &typeDict,
                              const SharedMemory &shared, const GroupContexts &group2ctx) {
  Executor exec = forShapes(artifact, ctx, shapes);
  exec.group2ctx_ = group2ctx;
  const Manifest &m = exec.manifest();
  auto check = [&](const TensorSpec &spec) {
    auto shape = shapes.find(spec.name);
    auto type = typeDict.find(spec.name);
    std::string problem;
    if (shape != shapes.end() && !spec.fits(knownDims(spec, shape->second), exec.batch_))
      problem = "shape " + shapeToString(shape->second) + " of '" + spec.name +
                "' differs from the compiled shape " + shapeOfSpec(spec, exec.batch_);
    else if (shape == shapes.end() && spec.isDynamic() && exec.batch_ < 0)
      problem = "the shape of '" + spec.name + "' has a dynamic batch dim " +
                shapeOfSpec(spec, -1) + "; give its shape, or the shape of another argument with one";
    else if (type != typeDict.end() && type->second != spec.dtype)
      problem = std::string("dtype ") + dtypeName(type->second) + " of '" + spec.name +
                "' differs from the compiled dtype " + dtypeName(spec.dtype);
    if (problem.empty())
      return;
    std::string message = "simple_bind error. Arguments:\n";
    for (const auto &[name, s] : shapes)
      message += name + ": " + shapeToString(s) + "\n";
    raise("RuntimeError", message + problem);
  };
  exec.gradReqs_ = simpleBindGradReqs(gradReq, m.arguments);
  // Given shapes first: any of them may fix the batch size the others take.
  for (const auto *specs : {&m.arguments, &m.auxStates})
    for (const TensorSpec &spec : *specs)
      if (shapes.count(spec.name))
        check(spec);
  for (const auto *specs : {&m.arguments, &m.auxStates})
    for (const TensorSpec &spec : *specs)
      check(spec);
  // Each variable in its group's context, else in ctx.
  std::map<std::string, Context> grouped = exec.groupedVariableContexts();
  auto contextOf = [&](const std::string &name) {
    auto it = grouped.find(name);
    return it == grouped.end() ? ctx : it->second;
  };
  for (size_t i = 0; i < m.arguments.size(); ++i) {
    const TensorSpec &spec = m.arguments[i];
    std::vector<int64_t> shape = resolveShape(spec, exec.batch_);
    Context where = contextOf(spec.name);
    bool needsGrad = exec.gradReqs_[i] != GradReq::Null;
    if (shared.exec && std::count(shared.argNames.begin(), shared.argNames.end(), spec.name)) {
      ArrayDict args = shared.exec->argMap(), grads = shared.exec->gradMap();
      exec.args_.push_back(sharedArray(args, spec, shape, "arg"));
      exec.grads_.push_back(!needsGrad ? NDArray() : grads[spec.name].isNone() ? NDArray(shape, spec.dtype, where)
                                                                                : grads[spec.name]);
    } else {
      exec.args_.push_back(reshapeOrCreate(shared.buffer, spec.name, shape, spec.dtype, where));
      exec.grads_.push_back(needsGrad ? reshapeOrCreate(shared.buffer, "grad of " + spec.name, shape, spec.dtype, where)
                                      : NDArray());
    }
  }
  // Aux states always come from shared_exec when there is one.
  ArrayDict sharedAux = shared.exec ? shared.exec->auxMap() : ArrayDict();
  for (const TensorSpec &spec : m.auxStates) {
    std::vector<int64_t> shape = resolveShape(spec, exec.batch_);
    exec.aux_.push_back(shared.exec ? sharedArray(sharedAux, spec, shape, "aux")
                                    : NDArray(shape, spec.dtype, contextOf(spec.name)));
  }
  const ParamsFile *embedded = exec.loaded_->embeddedParams();
  if (embedded && !shared.exec)
    exec.copyEmbeddedParams(*embedded);
  exec.placeDevices();
  exec.finishBinding(shared.exec);
  return exec;
}

namespace {

/// The shapes `name` is compiled for in `artifact` and its shape variants.
std::vector<std::vector<int64_t>> compiledShapes(const Artifact &artifact, const std::string &name) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<const Artifact *> family{&artifact};
  for (const auto &variant : artifact.shapeVariants())
    family.push_back(variant.get());
  for (const Artifact *member : family)
    for (const auto *specs : {&member->manifest().arguments, &member->manifest().auxStates})
      for (const TensorSpec &spec : *specs)
        if (spec.name == name && std::find(shapes.begin(), shapes.end(), spec.shape) == shapes.end())
          shapes.push_back(spec.shape);
  return shapes;
}

/// The `symc compile --shape` value that also runs `given`: '?' for a
/// leading dim that differs (the batch), 'A|B' for the sizes of another.
std::string suggestedShape(const std::vector<std::vector<int64_t>> &compiled, const std::vector<int64_t> &given) {
  std::string text;
  for (size_t d = 0; d < given.size(); ++d) {
    std::vector<int64_t> sizes;
    for (const std::vector<int64_t> &shape : compiled)
      if (d < shape.size() && std::find(sizes.begin(), sizes.end(), shape[d]) == sizes.end())
        sizes.push_back(shape[d]);
    if (std::find(sizes.begin(), sizes.end(), given[d]) == sizes.end())
      sizes.push_back(given[d]);
    std::sort(sizes.begin(), sizes.end());
    bool dynamic = std::find(sizes.begin(), sizes.end(), int64_t(-1)) != sizes.end() || (d == 0 && sizes.size() > 1);
    std::string dim;
    for (int64_t size : sizes)
      dim += (dim.empty() ? "" : "|") + std::to_string(size);
    text += (d ? "," : "") + (dynamic ? std::string("?") : dim);
  }
  return text;
}

/// GraphExecutor::Reshape's check and allocation of one argument or aux state.
NDArray reshaped(const NDArray &old, const std::vector<int64_t> &shape, bool allowUpSizing, const std::string &name) {
  if (elementCount(shape) <= old.size())
    return old.viewPrefix(shape); // memory shared with the old executor
  if (!allowUpSizing)
    raise("MXNetError", "New shape of arg: " + name +
                            " is larger than original.First making a big executor and then down sizing it is more "
                            "efficient than the reverse.If you really want to up size, set allow_up_sizing=True "
                            "to enable allocation of new arrays.");
  return NDArray(shape, old.dtype(), old.context());
}

[[noreturn]] void unspecifiedChanged(const std::string &name) {
  raise("MXNetError", "Shape of unspecifie arg: " + name +
                          " changed. This can cause the new executor to not share parameters with the old one. "
                          "Please check for error in network.If this is intended, set partial_shaping=True to "
                          "suppress this warning.");
}

} // namespace

int64_t Executor::reshapedBatch(const std::map<std::string, std::vector<int64_t>> &shapes) const {
  const Manifest &m = manifest();
  int64_t batch = -1;
  for (const auto *specs : {&m.arguments, &m.auxStates})
    for (const TensorSpec &spec : *specs) {
      auto given = shapes.find(spec.name);
      if (given == shapes.end())
        continue;
      int64_t fixed = batch;
      if (!spec.fits(given->second, fixed)) {
        std::vector<std::vector<int64_t>> compiled = compiledShapes(*loaded_, spec.name);
        std::string listed;
        for (const std::vector<int64_t> &shape : compiled)
          listed += (listed.empty() ? "" : ", ") + shapeToString(shape);
        raise("MXNetError", "reshape: '" + spec.name + "' of shape " + shapeToString(given->second) +
                                " does not fit the compiled shape" + (compiled.size() > 1 ? "s " : " ") + listed +
                                (batch >= 0 && spec.isDynamic() ? " with the batch size (-1) already bound to " +
                                                                      std::to_string(batch)
                                                                : "") +
                                ": only the dynamic (-1) batch dim changes without recompiling" +
                                (compiled.size() > 1 ? ", among the shapes compiled" : "") +
                                "; compile with symc compile --shape '" + spec.name + "=" +
                                suggestedShape(compiled, given->second) +
                                "' ('?' keeps the batch dim dynamic, 'A|B' compiles both sizes into one artifact)");
      }
      batch = fixed;
    }
  return batch;
}

/// Executor::reshape's artifact: the bound one when the shapes fit it, else
/// the first of `loaded`'s shape variants that they fit.
std::shared_ptr<const Artifact> Executor::artifactForReshape(const std::shared_ptr<const Artifact> &loaded,
                                                             const ShapeDict &shapes) const {
  if (loaded == loaded_ && artifact_->manifest().fits(shapes))
    return artifact_;
  std::shared_ptr<const Artifact> fitting = Artifact::forShapes(loaded, shapes);
  return fitting ? fitting : loaded == loaded_ ? artifact_ : loaded; // reshapedBatch says why
}

Executor Executor::reshape(bool partialShaping, bool allowUpSizing,
                           const std::map<std::string, std::vector<int64_t>> &shapes,
                           std::shared_ptr<const Artifact> target) const {
  std::shared_ptr<const Artifact> loaded = target ? std::move(target) : loaded_;
  Executor child(artifactForReshape(loaded, shapes), ctx_);
  child.loaded_ = loaded;
  const Manifest &m = child.manifest();
  if (namesOf(m.arguments) != listArguments() || namesOf(m.auxStates) != listAuxiliaryStates())
    raise("MXNetError", "reshape: '" + m.prefix + "' is not compiled from the same symbol (other arguments)");
  child.batch_ = child.reshapedBatch(shapes);
  if (child.batch_ < 0)
    child.batch_ = batch_;
  child.gradReqs_ = gradReqs_;
  child.numThreads_ = numThreads_;
  // The same placement: the arrays below keep their contexts.
  child.group2ctx_ = group2ctx_;
  child.placement_ = placement_;
  child.optimizedSymbol_ = optimizedSymbol_;
  child.graph_ = graph_;
  if (placement_) { // placed with its backward nodes
    child.fullGraph_ = fullGraph_;
    child.backwardOrder_ = backwardOrder_;
  }
  for (size_t i = 0; i < m.arguments.size(); ++i) {
    const std::string &name = m.arguments[i].name;
    std::vector<int64_t> shape = resolveShape(m.arguments[i], child.batch_);
    if (!partialShaping && !shapes.count(name) && shape != args_[i].shape())
      unspecifiedChanged(name);
    child.args_.push_back(reshaped(args_[i], shape, allowUpSizing, name));
    bool sharesArg = child.args_[i].sharesStorageWith(args_[i]);
    child.grads_.push_back(grads_[i].isNone() ? NDArray()
                           : sharesArg        ? grads_[i].viewPrefix(shape)
                                              : NDArray(shape, grads_[i].dtype(), grads_[i].context()));
    if (child.grads_[i].isNone())
      child.gradReqs_[i] = GradReq::Null;
  }
  // Naming an aux state's shape does not exempt it, as in MXNet.
  for (size_t i = 0; i < m.auxStates.size(); ++i) {
    std::vector<int64_t> shape = resolveShape(m.auxStates[i], child.batch_);
    if (!partialShaping && shape != aux_[i].shape())
      unspecifiedChanged(m.auxStates[i].name);
    child.aux_.push_back(reshaped(aux_[i], shape, allowUpSizing, m.auxStates[i].name));
  }
  child.finishBinding(this);
  if (monitorCallback_) // re-installed, as MXNet's reshape does
    child.setMonitorCallback(monitorCallback_, monitorAll_);
  return child;
}

const std::vector<NDArray> &Executor::forward(bool isTrain, const ArrayDict &kwargs) {
  const Manifest &m = manifest();
  for (const auto &[name, array] : kwargs) {
    int index = indexOf(m.arguments, name);
    if (index < 0)
      raise("TypeError", "Unknown argument " + name);
    NDArray &target = args_[index];
    if (array.shape() != target.shape())
      raise("ValueError", "Shape not match! Argument " + name + ", need: " +
                              shapeToString(target.shape()) + ", received: " +
                              shapeToString(array.shape()));
    target.copyFrom(array);
  }
  if (runForward(isTrain, /*newSeed=*/true, /*instrumented=*/bool(monitorCallback_)))
    reportToMonitor(); // before fixGammas: MXNet's monitor sees the gammas bound
  fixGammas();
  return outputs_;
}

int Executor::partialForward(bool isTrain, int step) {
  const Manifest &m = manifest();
  if (m.symbolJson.empty())
    raise("MXNetError", "'" + m.prefix + "' predates symc 0.2 and carries no graph to step through; recompile it");
  int count = static_cast<int>(steps().size());
  if (step < 0 || step >= count) // MXNet compares step as a size_t
    return 0;
  if (step == 0 || !partialRan_) {
    // Instrumented while a callback is installed: the steps report its values.
    runForward(isTrain, /*newSeed=*/true, /*instrumented=*/bool(monitorCallback_));
    fixGammas();
    partialRan_ = true;
  }
  const Step &current = steps()[step];
  if (monitorCallback_ && current.monitorNode >= 0)
    reportForwardNode(m.monitor->nodes[current.monitorNode]);
  else if (monitorCallback_ && current.copy)
    reportCopy(*current.copy);
  return count - step - 1;
}

/// The variant of `variants` for is_train: the inference one serves training
/// where no node behaves differently in training; null when none fits.
static const Variant *pickVariant(const std::vector<Variant> &variants, bool isTrain, const Manifest &m) {
  for (bool want : {isTrain, false})
    for (const Variant &v : variants)
      if (v.isTrain == want && (want == isTrain || m.trainSensitiveNodes.empty()))
        return &v;
  return nullptr;
}

bool Executor::runForward(bool isTrain, bool newSeed, bool instrumented) {
  const Manifest &m = manifest();
  bool monitored = instrumented && m.monitor && !monitorFrame_.empty();
  const Variant *variant = pickVariant(monitored ? m.monitor->variants : m.variants, isTrain, m);
  if (!variant)
    raise("MXNetError", "forward(is_train=" + std::string(isTrain ? "True" : "False") +
                            ") needs the " + (isTrain ? "training" : "inference") +
                            " variant, which this artifact lacks (node '" +
                            (m.trainSensitiveNodes.empty() ? "" : m.trainSensitiveNodes.front()) +
                            "' behaves differently in training)");
  if (newSeed)
    dims_[1] = nextStepSeed();
  // Only the training variant writes the saved values (and has them in its frame).
  bool training = !monitored && variant->isTrain && !trainingFrame_.empty();
  void *const *frame = monitored ? monitorFrame_.data() : training ? trainingFrame_.data() : frame_.data();
  if (!variant->isTrain) // the training variants compute what they read
    prepareIfStale();
  call(variant->entry, frame, monitored);
  savedFromTraining_ = training;
  return monitored;
}

void Executor::call(EntryPoint entry, void *const *frame, bool monitored) {
  setParallelThreads(numThreads_);
  SymcRunError error{};
  int32_t status = 0;
  void *workspace = monitored && !monitorWorkspace_.isNone() ? monitorWorkspace_.data() : workspace_.data();
  if (stream_)
    stream_->run([&] { status = entry(frame, dims_.data(), workspace, &error); });
  else
    status = entry(frame, dims_.data(), workspace, &error);
  if (status != 0) {
    auto [kind, message] = manifest().describeFailure(error);
    raise(kind.c_str(), message);
  }
}

void Executor::fixGammas() {
  const Manifest &m = manifest();
  for (const std::string &gamma : m.fixedGammas)
    args_[indexOf(m.arguments, gamma)].fill(1.0);
}

void Executor::setMonitorCallback(MonitorCallback callback, bool monitorAll) {
  const Manifest &m = manifest();
  if (callback && !m.monitor)
    raise("MXNetError", "'" + m.prefix + "' was compiled without its monitor variant (symc compile --no-monitor); "
                        "recompile it without that flag for set_monitor_callback");
  monitorCallback_ = std::move(callback);
  monitorAll_ = monitorAll;
  if (!monitorCallback_) {
    monitorFrame_.clear(); // back to the fused forward and backward
    monitorValues_.clear();
    backwardMonitorFrame_.clear();
    backwardMonitorValues_.clear();
    monitorWorkspace_ = NDArray();
  } else if (monitorFrame_.empty()) { // the instrumented variants' buffers
    if (m.monitor->workspaceBytes > workspace_.nbytes())
      monitorWorkspace_ = NDArray({static_cast<int64_t>(m.monitor->workspaceBytes)}, DType::UInt8, ctx_);
    monitorFrame_.assign(frame_.begin(), frame_.end() - prepared_.size());
    for (const TensorSpec &spec : m.monitor->values) {
      monitorValues_.emplace_back(resolveShape(spec, batch_), spec.dtype, ctx_);
      monitorFrame_.push_back(monitorValues_.back().data());
    }
    monitorFrame_.insert(monitorFrame_.end(), frame_.end() - prepared_.size(), frame_.end());
    if (m.monitor->backward && m.backward) {
      for (auto *group : {&args_, &aux_, &headGrads_, &computedGrads_, &auxUpdates_})
        for (const NDArray &a : *group)
          backwardMonitorFrame_.push_back(a.data());
      for (const TensorSpec &spec : m.monitor->backward->values) {
        backwardMonitorValues_.emplace_back(resolveShape(spec, batch_), spec.dtype, ctx_);
        backwardMonitorFrame_.push_back(backwardMonitorValues_.back().data());
      }
    }
  }
}

/// MXNet's RunOps callbacks, node by node: with monitor_all each input (a
/// variable by its name, then as "<node>_<input>"), then every output.
void Executor::reportToMonitor() const {
  for (const Step &step : steps())
    if (step.monitorNode >= 0)
      reportForwardNode(manifest().monitor->nodes[step.monitorNode]);
    else if (step.copy)
      reportCopy(*step.copy);
}

/// A copy node's callbacks: its input (a variable by its name too) with
/// monitor_all, then its output; on CPU contexts, the array it copies.
void Executor::reportCopy(const SymbolNode &copy) const {
  const NDArray *array = copiedArray(copy);
  if (!array)
    return;
  if (monitorAll_) {
    if (copy.inputs[0].node->isVariable())
      monitorCallback_(copy.inputs[0].node->name, *array);
    monitorCallback_(copy.name + "_data", *array);
  }
  monitorCallback_(copy.name + "_output", *array);
}

const NDArray *Executor::copiedArray(const SymbolNode &copy) const {
  const Manifest &m = manifest();
  const SymbolEntry &source = copy.inputs.at(0);
  if (source.node->isVariable()) {
    if (int i = indexOf(m.arguments, source.node->name); i >= 0)
      return &args_[i];
    int i = indexOf(m.auxStates, source.node->name);
    return i >= 0 ? &aux_[i] : nullptr;
  }
  for (const MonitorNode &node : m.monitor->nodes)
    if (node.name == source.node->name)
      return static_cast<size_t>(source.index) < node.outputs.size() ? &monitorValues_[node.outputs[source.index]]
                                                                      : nullptr;
  return nullptr;
}

const SymbolGraph &Executor::graph() const {
  if (!graph_)
    graph_ = std::make_shared<const SymbolGraph>(manifest().symbolJson.empty() ? SymbolGraph()
                                                                                : SymbolGraph::parse(manifest().symbolJson));
  return *graph_;
}

std::map<std::string, Context> Executor::groupedVariableContexts() const {
  std::map<std::string, Context> contexts;
  if (group2ctx_.empty())
    return contexts;
  for (const SymbolNodePtr &node : graph().executionOrder()) {
    auto group = node->isVariable() ? node->attrs.find(kCtxGroupAttr) : node->attrs.end();
    if (group == node->attrs.end())
      continue;
    if (auto ctx = group2ctx_.find(group->second); ctx != group2ctx_.end())
      contexts.emplace(node->name, ctx->second);
  }
  return contexts;
}

void Executor::placeDevices() {
  const Manifest &m = manifest();
  if (group2ctx_.empty() || m.symbolJson.empty())
    return;
  std::map<std::string, Context> variables;
  std::vector<Context> bound;
  for (auto [specs, arrays] : {std::pair{&m.arguments, &args_}, std::pair{&m.auxStates, &aux_}})
    for (size_t i = 0; i < specs->size(); ++i) {
      variables.emplace((*specs)[i].name, (*arrays)[i].context());
      bound.push_back((*arrays)[i].context());
    }
  for (const NDArray &grad : grads_)
    if (!grad.isNone())
      bound.push_back(grad.context());
  std::set<std::string> auxNames;
  for (const TensorSpec &spec : m.auxStates)
    auxNames.insert(spec.name);
  // MXNet places the forward and backward graph as one.
  SymbolGraph graph = SymbolGraph::parse(m.symbolJson);
  size_t forwardHeads = graph.heads.size();
  std::vector<const SymbolNode *> added;
  std::vector<GradientHead> gradients;
  if (describesBackward()) {
    graph = graph.withBackward(*m.monitor->backward, askedGradients(), added);
    for (size_t i = 0; i < m.arguments.size(); ++i)
      if (gradReqs_[i] != GradReq::Null)
        gradients.push_back({forwardHeads + gradients.size(), grads_[i].context()});
  }
  auto placement = std::make_shared<DevicePlacement>(
      symc::placeDevices(std::move(graph), group2ctx_, variables, bound, auxNames, gradients));
  SymbolGraph forward = placement->graph;
  forward.heads.resize(forwardHeads);
  graph_ = std::make_shared<const SymbolGraph>(std::move(forward));
  if (!added.empty())
    setFullGraph(std::shared_ptr<const SymbolGraph>(placement, &placement->graph), added);
  optimizedSymbol_ = graph_->toJson();
  placement_ = std::move(placement);
}

const std::vector<Executor::Step> &Executor::steps() const {
  if (stepsBuilt_)
    return steps_;
  const Manifest &m = manifest();
  std::map<std::string, int> monitored;
  for (size_t i = 0; m.monitor && i < m.monitor->nodes.size(); ++i)
    monitored[m.monitor->nodes[i].name] = static_cast<int>(i);
  if (m.symbolJson.empty()) { // the monitor's nodes are in MXNet's order
    for (size_t i = 0; m.monitor && i < m.monitor->nodes.size(); ++i)
      steps_.push_back({static_cast<int>(i), nullptr});
  }
  for (const SymbolNodePtr &node : graph().executionOrder()) {
    Step step;
    if (node->op == "_CrossDeviceCopy" && m.monitor)
      step.copy = node.get();
    else if (auto it = monitored.find(node->name); !node->isVariable() && it != monitored.end())
      step.monitorNode = it->second;
    steps_.push_back(step);
  }
  stepsBuilt_ = true;
  return steps_;
}

void Executor::reportToMonitor(const MonitorNode &node, const std::vector<NDArray> &values,
                               const std::function<std::string(size_t)> &outputName) const {
  for (const MonitorInput &input : node.inputs) {
    if (!monitorAll_)
      break;
    size_t i = static_cast<size_t>(input.argument);
    const NDArray *array = input.argument >= 0 ? (i < args_.size() ? &args_[i] : &aux_[i - args_.size()])
                           : input.value >= 0  ? &values[input.value]
                                               : nullptr;
    if (!array)
      continue;
    if (!input.variable.empty())
      monitorCallback_(input.variable, *array);
    monitorCallback_(input.name, *array);
  }
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] >= 0)
      monitorCallback_(outputName(i), values[node.outputs[i]]);
}

void Executor::reportForwardNode(const MonitorNode &node) const {
  reportToMonitor(node, monitorValues_,
                  [&](size_t i) { return manifest().monitor->values[node.outputs[i]].name; });
}

void Executor::reportBackwardToMonitor() const {
  const std::vector<BackwardNodeSpec> &specs = manifest().monitor->backward->nodes;
  fullGraph();
  for (size_t index : backwardOrder_) {
    const BackwardNodeSpec &spec = specs[index];
    reportToMonitor(spec, backwardMonitorValues_, [&](size_t i) {
      // Symbol::ListOutputNames; add_n's identities have no name.
      return (spec.name.empty() ? "output" : spec.name + "_output") + (spec.outputs.size() == 1 ? "" : std::to_string(i));
    });
  }
}

bool Executor::describesBackward() const {
  const Manifest &m = manifest();
  bool wantsGradients = std::any_of(gradReqs_.begin(), gradReqs_.end(), [](GradReq r) { return r != GradReq::Null; });
  return wantsGradients && m.monitor && m.monitor->backward && !m.symbolJson.empty();
}

std::set<std::string> Executor::askedGradients() const {
  std::set<std::string> asked;
  for (size_t i = 0; i < manifest().arguments.size(); ++i)
    if (gradReqs_[i] != GradReq::Null)
      asked.insert(manifest().arguments[i].name);
  return asked;
}

void Executor::setFullGraph(std::shared_ptr<const SymbolGraph> full, const std::vector<const SymbolNode *> &added) const {
  fullGraph_ = std::move(full);
  backwardOrder_.clear();
  for (const SymbolNodePtr &node : fullGraph_->executionOrder())
    if (auto it = std::find(added.begin(), added.end(), node.get()); it != added.end())
      backwardOrder_.push_back(static_cast<size_t>(it - added.begin()));
}

const SymbolGraph &Executor::fullGraph() const {
  if (fullGraph_)
    return *fullGraph_;
  if (!describesBackward()) {
    const SymbolGraph &forward = graph();
    fullGraph_ = std::shared_ptr<const SymbolGraph>(graph_, &forward);
    return *fullGraph_;
  }
  std::vector<const SymbolNode *> added;
  setFullGraph(std::make_shared<const SymbolGraph>(graph().withBackward(*manifest().monitor->backward,
                                                                        askedGradients(), added)),
               added);
  return *fullGraph_;
}

ParamArrays splitParams(const ParamsFile &file) {
  ParamArrays params;
  for (const NDArrayRecord &record : file.arrays) {
    std::string name = record.name;
    bool isAux = name.rfind("aux:", 0) == 0;
    if (isAux || name.rfind("arg:", 0) == 0)
      name = name.substr(4);
    (isAux ? params.aux : params.args)[name] =
        record.isNone ? NDArray() : NDArray::fromData(record.shape, record.dtype, record.data.data());
  }
  return params;
}

NDArrayRecord toRecord(const std::string &name, const NDArray &deviceOrHost) {
  NDArray array = deviceOrHost.isNone() ? deviceOrHost : deviceOrHost.toHost();
  NDArrayRecord record;
  record.name = name;
  record.isNone = array.isNone();
  record.shape = array.shape();
  record.dtype = array.dtype();
  const auto *bytes = static_cast<const uint8_t *>(array.data());
  if (bytes)
    record.data.assign(bytes, bytes + array.nbytes());
  return record;
}

void Executor::copyEmbeddedParams(const ParamsFile &file) {
  ParamArrays params = splitParams(file);
  // Arguments with the dynamic batch dim are inputs, whatever the file holds.
  for (const TensorSpec &spec : manifest().arguments)
    if (spec.isDynamic())
      params.args.erase(spec.name);
  copyParamsFrom(params.args, params.aux, /*allowExtraParams=*/true);
}

void Executor::checkCompiledGradients() const {
  const Manifest &m = manifest();
  for (size_t i = 0; i < m.arguments.size(); ++i)
    if (gradReqs_[i] != GradReq::Null && indexOf(m.backward->gradients, m.arguments[i].name) < 0)
      raise("MXNetError", "the gradient of '" + m.arguments[i].name +
                              "' was not compiled (symc compile --grad-req " + m.arguments[i].name +
                              "=null); bind it with grad_req 'null'");
}

void Executor::setHeadGradients(const std::vector<NDArray> &outGrads) {
  const Manifest &m = manifest();
  for (size_t h = 0; h < m.backward->headGradients.size(); ++h) {
    size_t output = indexOf(m.outputs, m.backward->headGradients[h].name);
    if (output >= outGrads.size() || outGrads[output].isNone())
      raise("MXNetError",
            "Because the last operator is not Loss function, head_gradient is required when "
            "calling backward. If you are attempting to minimize the output as an objective, "
            "please modify your network and pass it through the make_loss symbol.");
    headGrads_[h].copyFrom(outGrads[output], "the head gradient of output '" + m.outputs[output].name + "'");
  }
}

void Executor::backward(const ArrayDict &outGrads, bool isTrain) {
  std::vector<NDArray> byPosition;
  for (const TensorSpec &output : manifest().outputs) {
    auto it = outGrads.find(output.name);
    if (it == outGrads.end())
      raise("KeyError", "'" + output.name + "'");
    byPosition.push_back(it->second);
  }
  backward(byPosition, isTrain);
}

void Executor::backward(const std::vector<NDArray> &outGrads, bool isTrain) {
  const Manifest &m = manifest();
  if (!m.backward)
    raise("MXNetError", "'" + m.prefix + "' was compiled for inference only; compile it with "
                        "symc compile --train for backward");
  setHeadGradients(outGrads);
  bool monitored = runMonitoredBackward();
  if (!monitored) {
    // MXNet does not check that a training forward came first; the backward
    // reads its saved values, so one runs here when none did.
    // A monitored forward saves nothing: the training forward reruns with its
    // seed, so Dropout draws what the monitor saw.
    if (!m.backward->saved.empty() && !savedFromTraining_) {
      runForward(true, /*newSeed=*/false, /*instrumented=*/false);
      fixGammas();
    }
      call(m.backward->entry, backwardFrame_.data());
  }
  for (size_t g = 0; g < m.backward->gradients.size(); ++g) {
    size_t arg = indexOf(m.arguments, m.backward->gradients[g].name);
    if (grads_[arg].isNone() || gradReqs_[arg] == GradReq::Null)
      continue;
    if (gradReqs_[arg] == GradReq::Add)
      grads_[arg].addFrom(computedGrads_[g]);
    else
      grads_[arg].copyFrom(computedGrads_[g]);
  }
  // MXNet hands is_train to the ops' backward, where only BatchNorm's
  // moving-statistics update reads it.
  if (monitored) // the nodes read the aux states as they were before this backward
    reportBackwardToMonitor();
  if (isTrain)
    for (size_t u = 0; u < m.backward->auxUpdates.size(); ++u)
      aux_[indexOf(m.auxStates, m.backward->auxUpdates[u].name)].copyFrom(auxUpdates_[u]);
}

bool Executor::runMonitoredBackward() {
  const Manifest &m = manifest();
  if (!monitorCallback_ || backwardMonitorFrame_.empty())
    return false;
  // It recomputes the training forward with the last forward's step seed.
  call(m.monitor->backward->entry, backwardMonitorFrame_.data(), /*monitored=*/true);
  return true;
}

/// Executor._get_dict: names zipped with arrays; a duplicated name raises.
static ArrayDict zipUnique(const std::vector<TensorSpec> &specs, const std::vector<NDArray> &arrays) {
  ArrayDict dict;
  for (size_t i = 0; i < specs.size(); ++i)
    if (!dict.emplace(specs[i].name, arrays[i]).second) {
      std::string names;
      for (const TensorSpec &spec : specs)
        names += (names.empty() ? "'" : ", '") + spec.name + "'";
      raise("ValueError", "Duplicate names detected, [" + names + "]");
    }
  return dict;
}

ArrayDict Executor::argMap() const { return zipUnique(manifest().arguments, args_); }
ArrayDict Executor::gradMap() const { return zipUnique(manifest().arguments, grads_); }
ArrayDict Executor::auxMap() const { return zipUnique(manifest().auxStates, aux_); }
ArrayDict Executor::outputMap() const { return zipUnique(manifest().outputs, outputs_); }

size_t Executor::plannedBytes() const {
  size_t bytes = workspace_.nbytes();
  for (const auto *group : {&outputs_, &prepared_, &headGrads_, &saved_, &auxUpdates_})
    for (const NDArray &a : *group)
      bytes += a.nbytes();
  for (size_t g = 0; g < computedGrads_.size(); ++g)
    if (std::none_of(grads_.begin(), grads_.end(), [&](const NDArray &a) { return a.sharesStorageWith(computedGrads_[g]); }))
      bytes += computedGrads_[g].nbytes();
  return bytes;
}

std::string Executor::debugStr() const { return fullGraph().debugString(plannedBytes()); }

std::vector<std::string> Executor::listArguments() const { return namesOf(manifest().arguments); }
std::vector<std::string> Executor::listAuxiliaryStates() const { return namesOf(manifest().auxStates); }
std::vector<std::string> Executor::listOutputs() const { return namesOf(manifest().outputs); }

void Executor::copyParamsFrom(const ArrayDict &argParams, const std::optional<ArrayDict> &auxParams,
                              bool allowExtraParams) {
  auto copyInto = [&](const ArrayDict &params, const std::vector<TensorSpec> &specs,
                      std::vector<NDArray> &arrays, bool isAux) {
    for (const auto &[name, array] : params) {
      if (int index = indexOf(specs, name); index >= 0)
        arrays[index].copyFrom(array, std::string(isAux ? "auxiliary state '" : "argument '") + name + "'");
      else if (!allowExtraParams)
        raise("ValueError", isAux ? "Find name " + name + " that is not in the auxiliary states"
                                  : "Find name \"" + name + "\" that is not in the arguments");
    }
  };
  copyInto(argParams, manifest().arguments, args_, false);
  if (auxParams)
    copyInto(*auxParams, manifest().auxStates, aux_, true);
}

} // namespace symc
