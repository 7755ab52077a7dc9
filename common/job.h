/* Which rank of which job this process is, when a launcher says so (Open
 * MPI, MPICH/PMI, PMIx, Slurm, Cray PALS), and the host it runs on. */
#ifndef CLT_JOB_H
#define CLT_JOB_H

struct clt_job {
    int rank, size;          /* -1: not under a launcher that says */
    char host[64];           /* short host name */
    char id[64];             /* the job's id, "" if none said */
};

void clt_job_detect(struct clt_job *j);

#endif
