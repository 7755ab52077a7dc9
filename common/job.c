/* The launcher's word on rank, size and job id (common/job.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "job.h"

static const char *first_env(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v)
            return v;
    }
    return NULL;
}

void clt_job_detect(struct clt_job *j)
{
    static const char *const ranks[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
                                         "SLURM_PROCID", "PALS_RANKID", NULL };
    static const char *const sizes[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS",
                                         "PALS_SIZE", NULL };
    static const char *const ids[] = { "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "SLURM_JOB_ID", "PBS_JOBID",
                                       "PALS_APID", NULL };
    const char *r = first_env(ranks), *s = first_env(sizes), *id = first_env(ids);
    j->rank = r ? atoi(r) : -1;
    j->size = s ? atoi(s) : -1;
    j->id[0] = 0;
    /* an id goes into a folder name: keep it to letters, digits, '-', '_' and '.' */
    for (size_t i = 0, n = 0; id && id[i] && n + 1 < sizeof j->id; i++) {
        char c = id[i];
        j->id[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                     c == '_' || c == '.' ? c : '_';
        j->id[n] = 0;
    }
    if (gethostname(j->host, sizeof j->host) != 0)
        snprintf(j->host, sizeof j->host, "host");
    j->host[sizeof j->host - 1] = 0;
    char *dot = strchr(j->host, '.');
    if (dot)
        *dot = 0;
}
