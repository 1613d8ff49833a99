//===- SymbolImporter.cpp - MXNet symbol JSON to sym IR -------------------===//
//
// Follows MXNet 1.9.1's loader (src/nnvm/legacy_json_util.cc): node fields,
// the legacy upgraders, list_arguments' post-order DFS, and dmlc's parameter
// rules (unknown non-hidden keys are errors, `__hidden__` keys are kept).
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/SymbolImporter.h"

#include "dialects/Sym/IR/DTypes.h"
#include "compiler/Import/ParamParser.h"

#include "dialects/Sym/IR/OpSignatures.h"
#include "dialects/Sym/IR/SymOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <map>

using namespace mlir;
using namespace mlir::sym;

namespace {

/// MXNet's version as an int (1.9.1 -> 10901); files without one are v0.8.
constexpr int64_t kCurrentVersion = 10901;
constexpr int64_t kLegacyVersion = 800;

/// Keys that files older than 1.9.1 stored without the `__x__` wrapping.
constexpr llvm::StringLiteral kLegacyHiddenKeys[] = {"ctx_group", "lr_mult", "wd_mult",
                                                     "force_mirroring", "mirror_stage"};

struct Entry {
  unsigned node;
  unsigned index;
};

struct Node {
  std::string op; // "null" for variables
  std::string name;
  std::map<std::string, std::string> attrs; // params and hidden attrs, sorted
  llvm::SmallVector<Entry> inputs;
  llvm::SmallVector<unsigned> controlDeps;
  bool isVariable() const { return op == "null"; }
};

/// Each output is a buffer of the entry points, and LLVM's scheduling of
/// the code that fills them grows quadratically: 2048 outputs of tiny
/// arrays compile in about a minute, 100k would take hours.
constexpr size_t kMaxHeads = 2048;

/// A symbol nests four levels deep (nodes, a node, its inputs, an entry).
constexpr int kMaxJsonDepth = 256;

/// The offset of the first bracket past kMaxJsonDepth levels, skipping
/// strings; none for a document within the limit.
std::optional<size_t> findExcessiveNesting(llvm::StringRef json) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

bool isHiddenKey(llvm::StringRef key) {
  return key.size() > 4 && key.starts_with("__") && key.ends_with("__");
}

class Importer {
public:
  Importer(MLIRContext *ctx, llvm::StringRef fileName)
      : ctx(ctx), fileLoc(FileLineColLoc::get(ctx, fileName, 0, 0)) {}

  OwningOpRef<ModuleOp> run(llvm::StringRef json, llvm::ArrayRef<std::string> outputs) {
    if (failed(parseGraph(json)) || failed(upgrade()) || failed(checkStructure()) ||
        failed(selectOutputs(outputs)))
      return nullptr;
    return build();
  }

private:
  //===--------------------------------------------------------------------===//
  // Errors
  //===--------------------------------------------------------------------===//

  InFlightDiagnostic fileError() { return emitError(fileLoc); }

  InFlightDiagnostic nodeError(unsigned nid) {
    const Node &n = nodes[nid];
    return emitError(nodeLoc(nid)) << "node " << nid << " '" << n.name << "' (op " << n.op
                                   << "): ";
  }

  Location nodeLoc(unsigned nid) {
    return NameLoc::get(StringAttr::get(ctx, nodes[nid].name), fileLoc);
  }

  //===--------------------------------------------------------------------===//
  // JSON
  //===--------------------------------------------------------------------===//

  LogicalResult parseGraph(llvm::StringRef json) {
    // llvm::json::parse recurses once per level: bound the depth first.
    if (std::optional<size_t> offset = findExcessiveNesting(json))
      return fileError() << "malformed JSON: nested deeper than " << kMaxJsonDepth << " levels at byte " << *offset;
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
    if (!parsed)
      return fileError() << "malformed JSON: " << llvm::toString(parsed.takeError());
    const llvm::json::Object *root = parsed->getAsObject();
    if (!root)
      return fileError() << "the symbol JSON must be an object";
    for (const char *field : {"nodes", "arg_nodes", "heads"})
      if (!root->get(field))
        return fileError() << "missing required field '" << field << "'";
    const llvm::json::Array *nodeArray = root->getArray("nodes");
    if (!nodeArray)
      return fileError() << "'nodes' must be an array";
    for (const llvm::json::Value &v : *nodeArray)
      if (failed(parseNode(v, nodes.size())))
        return failure();
    if (failed(parseEntries(root->get("heads"), "heads", heads)) ||
        failed(parseArgNodes(root->get("arg_nodes"))))
      return failure();
    version = kLegacyVersion;
    if (const llvm::json::Object *attrs = root->getObject("attrs"))
      if (const llvm::json::Array *v = attrs->getArray("mxnet_version"))
        if (v->size() == 2 && (*v)[1].getAsInteger())
          version = *(*v)[1].getAsInteger();
    return success();
  }

  LogicalResult parseNode(const llvm::json::Value &v, unsigned nid) {
    const llvm::json::Object *obj = v.getAsObject();
    if (!obj)
      return fileError() << "node " << nid << " is not an object";
    Node node;
    std::optional<llvm::StringRef> op = obj->getString("op"), name = obj->getString("name");
    if (!op || !name || !obj->get("inputs"))
      return fileError() << "node " << nid << " lacks a required field ('op', 'name' and "
                         << "'inputs' are required)";
    node.op = op->str();
    node.name = name->str();
    nodes.push_back(node);
    // `attr` and `attrs` fill one dict; legacy `param` entries are merged after.
    for (const char *field : {"attrs", "attr", "param"}) {
      const llvm::json::Value *dict = obj->get(field);
      if (!dict)
        continue;
      const llvm::json::Object *entries = dict->getAsObject();
      if (!entries)
        return nodeError(nid) << "'" << field << "' must be an object";
      for (const auto &[key, value] : *entries) {
        std::optional<llvm::StringRef> s = value.getAsString();
        if (!s)
          return nodeError(nid) << "attribute '" << key.str() << "' must be a string";
        nodes[nid].attrs[key.str()] = s->str();
      }
    }
    if (failed(parseEntries(obj->get("inputs"), "inputs", nodes[nid].inputs, nid)))
      return failure();
    if (const llvm::json::Value *deps = obj->get("control_deps")) {
      const llvm::json::Array *arr = deps->getAsArray();
      if (!arr)
        return nodeError(nid) << "'control_deps' must be an array";
      for (const llvm::json::Value &d : *arr) {
        std::optional<int64_t> id = d.getAsInteger();
        if (!id || *id < 0 || *id >= nid)
          return nodeError(nid) << "control dependency is not an earlier node";
        nodes[nid].controlDeps.push_back(*id);
      }
    }
    return success();
  }

  /// Entries are [node, index] (v0.8) or [node, index, version].
  LogicalResult parseEntries(const llvm::json::Value *v, llvm::StringRef what,
                             llvm::SmallVectorImpl<Entry> &out,
                             std::optional<unsigned> owner = std::nullopt) {
    auto error = [&]() { return owner ? nodeError(*owner) : fileError(); };
    const llvm::json::Array *arr = v ? v->getAsArray() : nullptr;
    if (!arr)
      return error() << "'" << what << "' must be an array";
    for (const llvm::json::Value &e : *arr) {
      const llvm::json::Array *pair = e.getAsArray();
      if (!pair || pair->size() < 2 || pair->size() > 3 || !(*pair)[0].getAsInteger() ||
          !(*pair)[1].getAsInteger())
        return error() << "each entry of '" << what << "' must be [node, index] or "
                       << "[node, index, version]";
      int64_t id = *(*pair)[0].getAsInteger(), index = *(*pair)[1].getAsInteger();
      // A node's inputs come before it; heads may name any node.
      int64_t limit = owner ? *owner : nodes.size();
      if (id < 0 || id >= limit)
        return error() << "entry [" << id << ", " << index << "] of '" << what
                       << "' refers to a node that does not exist"
                       << (owner ? " before this node" : "");
      // Checked against the node's outputs later; here only kept from wrapping.
      if (index < 0 || index > INT32_MAX)
        return error() << "entry [" << id << ", " << index << "] of '" << what
                       << "' refers to an output index out of range";
      out.push_back({static_cast<unsigned>(id), static_cast<unsigned>(index)});
    }
    return success();
  }

  LogicalResult parseArgNodes(const llvm::json::Value *v) {
    const llvm::json::Array *arr = v->getAsArray();
    if (!arr)
      return fileError() << "'arg_nodes' must be an array";
    for (const llvm::json::Value &e : *arr) {
      std::optional<int64_t> id = e.getAsInteger();
      if (!id || *id < 0 || *id >= static_cast<int64_t>(nodes.size()))
        return fileError() << "'arg_nodes' entry is not a node index";
      if (!nodes[*id].isVariable())
        return nodeError(*id) << "listed in 'arg_nodes' but is not a variable";
    }
    return success();
  }

  //===--------------------------------------------------------------------===//
  // Legacy upgrades (UpgradeJSON_*)
  //===--------------------------------------------------------------------===//

  LogicalResult upgrade() {
    // Every unknown op is reported, with the nodes using it, in one error.
    llvm::MapVector<llvm::StringRef, llvm::SmallVector<llvm::StringRef>> unknown;
    for (unsigned nid = 0; nid < nodes.size(); ++nid) {
      if (nodes[nid].isVariable())
        continue;
      if (std::optional<llvm::StringRef> canonical = resolveOpName(nodes[nid].op))
        nodes[nid].op = canonical->str();
      else
        unknown[nodes[nid].op].push_back(nodes[nid].name);
    }
    if (!unknown.empty()) {
      InFlightDiagnostic error = fileError();
      error << "the symbol uses " << unknown.size() << " unknown op" << (unknown.size() > 1 ? "s" : "") << ":";
      for (auto &[op, users] : unknown)
        error << " '" << op << "' (node" << (users.size() > 1 ? "s '" : " '") << llvm::join(users, "', '") << "')";
      return error;
    }
    if (version < kCurrentVersion)
      fixLegacyHiddenKeys();
    if (version < 900)
      addMissingAuxInputs();
    if (version < 904)
      setBatchNormStatInitializers();
    if (version < 905)
      dropArgmaxLastAxis();
    return success();
  }

  /// UpgradeJSON_FixParsing: `ctx_group` -> `__ctx_group__`; an op's
  /// `weight_lr_mult` moves onto its `weight` variable as `__lr_mult__`.
  void fixLegacyHiddenKeys() {
    for (unsigned nid = 0; nid < nodes.size(); ++nid) {
      Node &n = nodes[nid];
      for (llvm::StringRef key : kLegacyHiddenKeys) {
        auto it = n.attrs.find(key.str());
        if (it == n.attrs.end())
          continue;
        n.attrs["__" + key.str() + "__"] = it->second;
        n.attrs.erase(it);
      }
      if (n.isVariable())
        continue;
      OpSignature sig = getOpSignature(n.op, DictionaryAttr());
      for (auto [i, inputName] : llvm::enumerate(sig.inputs)) {
        if (i >= n.inputs.size() || !nodes[n.inputs[i].node].isVariable())
          continue;
        for (llvm::StringRef key : kLegacyHiddenKeys) {
          auto it = n.attrs.find(inputName + "_" + key.str());
          if (it == n.attrs.end())
            continue;
          nodes[n.inputs[i].node].attrs["__" + key.str() + "__"] = it->second;
          n.attrs.erase(it);
        }
      }
    }
  }

  /// UpgradeJSON_000800_000900: pre-0.9 files lack aux inputs; create the
  /// variables `<node>_<input>` with the node's attributes.
  void addMissingAuxInputs() {
    for (unsigned nid = 0; nid < nodes.size(); ++nid) {
      if (nodes[nid].isVariable())
        continue;
      OpSignature sig = getOpSignature(nodes[nid].op, DictionaryAttr());
      for (size_t i = nodes[nid].inputs.size(); i < sig.inputs.size(); ++i) {
        if (!llvm::is_contained(sig.auxInputs, i))
          continue;
        Node var;
        var.op = "null";
        var.name = nodes[nid].name + "_" + sig.inputs[i];
        var.attrs = nodes[nid].attrs;
        nodes.push_back(var);
        nodes[nid].inputs.push_back({static_cast<unsigned>(nodes.size() - 1), 0});
      }
    }
  }

  /// UpgradeJSON_000903_000904: BatchNorm's FSetInputVarAttrOnCompose.
  void setBatchNormStatInitializers() {
    for (Node &n : nodes) {
      if (n.op != "BatchNorm" || n.inputs.size() != 5)
        continue;
      nodes[n.inputs[3].node].attrs.emplace("__init__", "[\"zero\", {}]");
      nodes[n.inputs[4].node].attrs.emplace("__init__", "[\"one\", {}]");
    }
  }

  /// UpgradeJSON_000904_000905: argmax and argmin with axis "-1" search
  /// all elements (no axis).
  void dropArgmaxLastAxis() {
    for (Node &n : nodes) {
      auto axis = n.attrs.find("axis");
      if ((n.op == "argmax" || n.op == "argmin") && axis != n.attrs.end() && axis->second == "-1")
        n.attrs.erase(axis);
    }
  }

  //===--------------------------------------------------------------------===//
  // Structure
  //===--------------------------------------------------------------------===//

  unsigned numOutputs(unsigned nid) {
    return nodes[nid].isVariable() ? 1 : signatures[nid].outputs.size();
  }

  /// Parses every op node's params; checks input counts and entry indices.
  LogicalResult checkStructure() {
    parsedParams.resize(nodes.size());
    hiddenAttrs.resize(nodes.size());
    signatures.resize(nodes.size());
    for (unsigned nid = 0; nid < nodes.size(); ++nid) {
      if (failed(parseNodeAttrs(nid)))
        return failure();
      if (!nodes[nid].isVariable())
        signatures[nid] = getOpSignature(nodes[nid].op, parsedParams[nid]);
    }
    for (unsigned nid = 0; nid < nodes.size(); ++nid) {
      const Node &n = nodes[nid];
      if (n.isVariable()) {
        if (!n.inputs.empty())
          return nodeError(nid) << "a variable cannot have inputs";
        continue;
      }
      const OpSignature &sig = signatures[nid];
      if (n.inputs.size() != sig.inputs.size())
        return nodeError(nid) << "expects " << sig.inputs.size() << " inputs ("
                              << llvm::join(sig.inputs, ", ") << "), got " << n.inputs.size();
      for (const Entry &e : n.inputs)
        if (e.index >= numOutputs(e.node))
          return nodeError(nid) << "input refers to output " << e.index << " of node " << e.node
                                << " '" << nodes[e.node].name << "', which has "
                                << numOutputs(e.node) << " outputs";
    }
    if (heads.empty())
      return fileError() << "the symbol has no outputs ('heads' is empty)";
    if (heads.size() > kMaxHeads)
      return fileError() << "the symbol has " << heads.size() << " outputs; symc compiles at most " << kMaxHeads
                         << " (select the ones you need with --outputs)";
    for (const Entry &e : heads)
      if (e.index >= numOutputs(e.node))
        return fileError() << "head [" << e.node << ", " << e.index << "] refers to an output '"
                           << nodes[e.node].name << "' does not have";
    return success();
  }

  /// MXPredCreatePartialOut's heads: for each key, the node output named
  /// `<key>_output` (so single-output op nodes) of GetInternals().
  LogicalResult selectOutputs(llvm::ArrayRef<std::string> keys) {
    if (keys.empty())
      return success();
    llvm::SmallVector<Entry> selected;
    for (const std::string &key : keys) {
      std::optional<Entry> found;
      for (unsigned nid = 0; nid < nodes.size() && !found; ++nid)
        for (unsigned i = 0; !nodes[nid].isVariable() && i < numOutputs(nid) && !found; ++i)
          if (outputName({nid, i}) == key + "_output")
            found = Entry{nid, i};
      if (!found)
        return fileError() << "didn't find node name: " << key << " (an output key names a node whose output is '"
                           << key << "_output')";
      selected.push_back(*found);
    }
    heads = std::move(selected);
    return success();
  }

  /// dmlc::Parameter's rules: hidden keys kept aside, unknown keys rejected.
  LogicalResult parseNodeAttrs(unsigned nid) {
    const Node &n = nodes[nid];
    NamedAttrList params, hidden;
    if (n.isVariable()) {
      for (const auto &[key, value] : n.attrs)
        hidden.append(key, StringAttr::get(ctx, value));
      hiddenAttrs[nid] = hidden.getDictionary(ctx);
      return success();
    }
    std::optional<RegisteredOperationName> opName =
        RegisteredOperationName::lookup(("sym." + dialectOpName(n.op)).str(), ctx);
    assert(opName && "resolveOpName only returns ops the dialect defines");
    llvm::ArrayRef<StringAttr> known = opName->getAttributeNames();
    for (const auto &[key, value] : n.attrs) {
      if (isHiddenKey(key)) {
        hidden.append(key, StringAttr::get(ctx, value));
        continue;
      }
      if (!llvm::is_contained(known, StringAttr::get(ctx, key)))
        return nodeError(nid) << "unknown attribute '" << key << "' (Cannot find argument '"
                              << key << "', in operator " << n.op << "(name=" << n.name << "))";
      std::string error;
      FailureOr<Attribute> attr = symc::parseParam(ctx, dialectOpName(n.op), key, value, error);
      if (failed(attr))
        return nodeError(nid) << "invalid value '" << value << "' for attribute '" << key
                              << "': " << error;
      if (*attr)
        params.append(key, *attr);
    }
    parsedParams[nid] = params.getDictionary(ctx);
    hiddenAttrs[nid] = hidden.getDictionary(ctx);
    return success();
  }

  /// nnvm's post-order DFS from the heads: inputs, then control deps.
  llvm::SmallVector<unsigned> postOrder() {
    llvm::SmallVector<unsigned> order;
    llvm::SmallVector<bool> visited(nodes.size(), false);
    llvm::SmallVector<std::pair<unsigned, unsigned>> stack; // node, next child
    auto child = [&](unsigned nid, unsigned k) {
      const Node &n = nodes[nid];
      return k < n.inputs.size() ? n.inputs[k].node : n.controlDeps[k - n.inputs.size()];
    };
    for (const Entry &head : heads) {
      if (visited[head.node])
        continue;
      visited[head.node] = true;
      stack.push_back({head.node, 0});
      while (!stack.empty()) {
        auto &[nid, k] = stack.back();
        const Node &n = nodes[nid];
        if (k == n.inputs.size() + n.controlDeps.size()) {
          order.push_back(nid);
          stack.pop_back();
          continue;
        }
        unsigned next = child(nid, k++);
        if (!visited[next]) {
          visited[next] = true;
          stack.push_back({next, 0});
        }
      }
    }
    return order;
  }

  //===--------------------------------------------------------------------===//
  // IR
  //===--------------------------------------------------------------------===//

  /// The element type a variable starts with: `__dtype__`, else float32.
  FailureOr<Type> variableElementType(unsigned nid) {
    auto it = nodes[nid].attrs.find("__dtype__");
    if (it == nodes[nid].attrs.end())
      return Type(Float32Type::get(ctx));
    int64_t code;
    Type t;
    if (!llvm::StringRef(it->second).getAsInteger(10, code))
      t = sym::dtypeFromCode(ctx, code);
    if (!t)
      return nodeError(nid) << "invalid __dtype__ '" << it->second << "'";
    return t;
  }

  /// The type a variable starts with: `__shape__` (0 = unknown dim) if given.
  FailureOr<Type> variableType(unsigned nid) {
    FailureOr<Type> element = variableElementType(nid);
    if (failed(element))
      return failure();
    auto it = nodes[nid].attrs.find("__shape__");
    if (it == nodes[nid].attrs.end())
      return Type(UnrankedTensorType::get(*element));
    std::string error;
    FailureOr<Attribute> dims = symc::parseParam(ctx, "", "shape", it->second, error);
    if (failed(dims))
      return nodeError(nid) << "invalid __shape__ '" << it->second << "': " << error;
    auto values = llvm::cast<DenseI64ArrayAttr>(*dims).asArrayRef();
    if (values.empty())
      return Type(UnrankedTensorType::get(*element));
    llvm::SmallVector<int64_t> shape(values);
    for (int64_t &d : shape)
      if (d <= 0)
        d = ShapedType::kDynamic;
    return Type(RankedTensorType::get(shape, *element));
  }

  OwningOpRef<ModuleOp> build() {
    llvm::SmallVector<unsigned> order = postOrder();
    // Aux states are the variables an op mutates (FMutateInputs).
    llvm::DenseSet<unsigned> aux;
    for (unsigned nid : order)
      if (!nodes[nid].isVariable())
        for (unsigned i : signatures[nid].auxInputs)
          aux.insert(nodes[nid].inputs[i].node);
    llvm::SmallVector<unsigned> inputs;
    for (bool wantAux : {false, true})
      for (unsigned nid : order)
        if (nodes[nid].isVariable() && aux.contains(nid) == wantAux)
          inputs.push_back(nid);

    OpBuilder b(ctx);
    OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
    llvm::SmallVector<Type> argTypes;
    for (unsigned nid : inputs) {
      FailureOr<Type> t = variableType(nid);
      if (failed(t))
        return nullptr;
      argTypes.push_back(*t);
    }
    b.setInsertionPointToEnd(module->getBody());
    auto func = b.create<func::FuncOp>(fileLoc, "main", b.getFunctionType(argTypes, {}));
    Block *body = new Block();
    func.getBody().push_back(body);
    for (auto [nid, type] : llvm::zip(inputs, argTypes))
      body->addArgument(type, nodeLoc(nid));
    // Set at once: setArgAttr per argument rebuilds the whole list each time.
    llvm::SmallVector<DictionaryAttr> argAttrs;
    for (auto [i, nid] : llvm::enumerate(inputs)) {
      NamedAttrList attrs;
      attrs.append(kNameAttr, b.getStringAttr(nodes[nid].name));
      if (aux.contains(nid))
        attrs.append(kAuxAttr, b.getUnitAttr());
      if (!hiddenAttrs[nid].empty())
        attrs.append(kHiddenAttr, hiddenAttrs[nid]);
      argAttrs.push_back(attrs.getDictionary(ctx));
      values[{nid, 0}] = body->getArgument(i);
    }
    func.setAllArgAttrs(argAttrs);

    b.setInsertionPointToEnd(body);
    for (unsigned nid : order)
      if (!nodes[nid].isVariable() && !createOp(b, nid))
        return nullptr;

    llvm::SmallVector<Value> results;
    for (const Entry &e : heads)
      results.push_back(values[{e.node, e.index}]);
    b.create<func::ReturnOp>(fileLoc, results);
    func.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
    llvm::SmallVector<DictionaryAttr> resultAttrs;
    for (const Entry &e : heads)
      resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(kNameAttr, b.getStringAttr(outputName(e)))));
    func.setAllResultAttrs(resultAttrs);
    std::string symbol;
    llvm::raw_string_ostream(symbol) << llvm::json::Value(symbolJson());
    (*module)->setAttr(kSymbolAttr, b.getStringAttr(symbol));
    return module;
  }

  /// The graph as MXNet 1.9.1 saves a symbol (SaveJSON): what it loads back.
  llvm::json::Object symbolJson() {
    // nnvm versions a variable each time an op mutates it (FMutateInputs):
    // BatchNorm reads its moving statistics at version 1.
    std::vector<int64_t> versions(nodes.size(), 0);
    auto entry = [&](const Entry &e) { return llvm::json::Array{e.node, e.index, versions[e.node]}; };
    llvm::json::Array jsonNodes, argNodes, rowPtr{0}, jsonHeads;
    for (unsigned nid = 0; nid < nodes.size(); ++nid) {
      const Node &n = nodes[nid];
      if (!n.isVariable())
        for (unsigned i : signatures[nid].auxInputs)
          ++versions[n.inputs[i].node];
      llvm::json::Object node{{"op", n.op}, {"name", n.name}};
      if (!n.attrs.empty()) {
        llvm::json::Object attrs;
        for (const auto &[key, value] : n.attrs)
          attrs[key] = value;
        node["attrs"] = std::move(attrs);
      }
      llvm::json::Array inputs;
      for (const Entry &e : n.inputs)
        inputs.push_back(entry(e));
      node["inputs"] = std::move(inputs);
      if (!n.controlDeps.empty())
        node["control_deps"] = llvm::json::Array(n.controlDeps);
      jsonNodes.push_back(std::move(node));
      if (n.isVariable())
        argNodes.push_back(nid);
      rowPtr.push_back(*rowPtr.back().getAsInteger() + numOutputs(nid));
    }
    for (const Entry &e : heads)
      jsonHeads.push_back(entry(e));
    return llvm::json::Object{{"nodes", std::move(jsonNodes)},
                              {"arg_nodes", std::move(argNodes)},
                              {"node_row_ptr", std::move(rowPtr)},
                              {"heads", std::move(jsonHeads)},
                              {"attrs", llvm::json::Object{{"mxnet_version", llvm::json::Array{"int", kCurrentVersion}}}}};
  }

  std::string outputName(const Entry &e) {
    const Node &n = nodes[e.node];
    if (n.isVariable())
      return n.name;
    return getOutputName(n.name, signatures[e.node], e.index);
  }

  Operation *createOp(OpBuilder &b, unsigned nid) {
    const Node &n = nodes[nid];
    OperationState state(nodeLoc(nid), ("sym." + dialectOpName(n.op)).str());
    llvm::SmallVector<Type> operandElementTypes;
    for (const Entry &e : n.inputs) {
      Value v = values[{e.node, e.index}];
      state.operands.push_back(v);
      operandElementTypes.push_back(llvm::cast<TensorType>(v.getType()).getElementType());
    }
    state.attributes.append(parsedParams[nid].getValue());
    if (!hiddenAttrs[nid].empty())
      state.attributes.append(kHiddenAttr, hiddenAttrs[nid]);
    unsigned numResults = numOutputs(nid);
    state.types.assign(numResults, UnrankedTensorType::get(Float32Type::get(ctx)));
    Operation *op = b.create(state);
    // Its attributes checked before type inference reads them (a Cast
    // without dtype).
    if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
      op->erase();
      return nullptr;
    }
    auto iface = cast<ShapeInferenceOpInterface>(op);
    for (unsigned i = 0; i < numResults; ++i) {
      Type element = iface.inferResultElementType(i, operandElementTypes);
      op->getResult(i).setType(UnrankedTensorType::get(element));
      values[{nid, i}] = op->getResult(i);
    }
    return op;
  }

  MLIRContext *ctx;
  Location fileLoc;
  int64_t version = kLegacyVersion;
  std::vector<Node> nodes;
  llvm::SmallVector<Entry> heads;
  std::vector<DictionaryAttr> parsedParams, hiddenAttrs;
  /// Per op node, from its parsed params (empty for variables).
  std::vector<OpSignature> signatures;
  std::map<std::pair<unsigned, unsigned>, Value> values;
};

} // namespace

OwningOpRef<ModuleOp> symc::importSymbolJson(MLIRContext *ctx, llvm::StringRef fileName,
                                             llvm::StringRef json, llvm::ArrayRef<std::string> outputs) {
  ctx->getOrLoadDialect<SymDialect>();
  return Importer(ctx, fileName).run(json, outputs);
}

OwningOpRef<ModuleOp> symc::importSymbolFile(MLIRContext *ctx, llvm::StringRef path,
                                             llvm::ArrayRef<std::string> outputs) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "cannot read symbol file: " << buffer.getError().message();
    return nullptr;
  }
  return importSymbolJson(ctx, path, (*buffer)->getBuffer(), outputs);
}
