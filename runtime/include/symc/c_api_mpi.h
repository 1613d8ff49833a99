/*===- c_api_mpi.h - libsymrt_mpi: training across mpirun's processes -*- C -*-===
 *
 * The C side of symc/Distributed.h, in libsymrt_mpi (built where Open MPI
 * is installed; link -lsymrt_mpi -lsymrt). Errors are read as libsymrt's:
 * SymcGetLastError / SymcGetLastErrorKind.
 *
 *===----------------------------------------------------------------------===*/
#ifndef SYMC_C_API_MPI_H
#define SYMC_C_API_MPI_H

#include "symc/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Joins the job (MPI initialized on first use); this process's rank and the
   number of processes. */
int SymcMpiInit(int *rank, int *size);
/* Every rank's `digest` (up to 64 bytes) of `what` must equal rank 0's, else
   every rank fails naming the ranks that differ. */
int SymcMpiCheckSame(const char *what, const char *digest);
/* Rank 0's parameters and aux states to every rank's devices. */
int SymcMpiBroadcastParams(SymcExecutorGroupHandle group);
/* After SymcExecutorGroupAggregateGradients: each parameter's gradient summed
   over the ranks into every device's gradient (kvstore dist_sync). */
int SymcMpiAllReduceGradients(SymcExecutorGroupHandle group);
/* The same for kvstore `kvstore`: "dist_sync" (MPI_Allreduce in host memory)
   or "dist_sync_device" (NCCL over each rank's first GPU, its communicator
   set up through MPI; a rank that fails ends the job). */
int SymcMpiAllReduceGradientsEx(SymcExecutorGroupHandle group, const char *kvstore);

#ifdef __cplusplus
}
#endif

#endif
