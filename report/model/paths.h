/* The traces to read: a file, or a folder's traces (a job's). */
#ifndef CLT_REPORT_PATHS_H
#define CLT_REPORT_PATHS_H

struct rm_paths { char **p; unsigned n, cap; };
/* Appended in name order; 0 ok (an empty folder adds nothing), -1 said why on stderr. */
int rm_paths_add(struct rm_paths *ps, const char *path);
void rm_paths_free(struct rm_paths *ps);

#endif
