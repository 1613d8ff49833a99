//===- symc.cpp - the symc compiler driver --------------------------------===//
//
//   symc compile MODEL-symbol.json --shape data=1,3,224,224 --emit=sym
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/Driver.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cl = llvm::cl;

namespace {

cl::SubCommand compileCommand("compile", "Compile an MXNet symbol");

cl::opt<std::string> symbolPath(cl::Positional, cl::desc("<MODEL-symbol.json>"), cl::Required,
                                cl::sub(compileCommand));

cl::list<std::string> shapes("shape",
                             cl::desc("input shape NAME=D0,D1,... ('?' keeps a dim dynamic)"),
                             cl::value_desc("name=dims"), cl::sub(compileCommand));

enum class Emit { Sym, Interface };
cl::opt<Emit> emit("emit", cl::desc("what to produce"), cl::init(Emit::Sym),
                   cl::values(clEnumValN(Emit::Sym, "sym", "shape-inferred sym dialect IR"),
                              clEnumValN(Emit::Interface, "interface",
                                         "arguments, aux states and outputs as JSON")),
                   cl::sub(compileCommand));

cl::opt<std::string> outputPath("o", cl::desc("output file ('-' for stdout)"), cl::init("-"),
                                cl::value_desc("path"), cl::sub(compileCommand));

int runCompile() {
  mlir::MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  symc::NodeDiagnosticPrinter diagnostics(ctx, llvm::errs());
  symc::CompileOptions options{symbolPath, std::vector<std::string>(shapes.begin(), shapes.end())};
  mlir::OwningOpRef<mlir::ModuleOp> module = symc::compileToSym(ctx, options);
  if (!module)
    return 1;

  std::string error;
  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "symc: cannot open " << outputPath << ": " << error << "\n";
    return 1;
  }
  if (emit == Emit::Interface) {
    symc::printInterface(*module, output->os());
  } else {
    // Locations carry the MXNet node names.
    module->print(output->os(), mlir::OpPrintingFlags().enableDebugInfo());
    output->os() << "\n";
  }
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "symc: ahead-of-time compiler for MXNet symbols\n");
  if (compileCommand)
    return runCompile();
  llvm::errs() << "symc: no command given; try 'symc compile --help'\n";
  return 1;
}
