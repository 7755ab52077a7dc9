/* The trace file (file.c): created, written with whole packets, gzipped as
 * it goes; the writer's helper threads (the compressor, the spill's writes). */
#ifndef CLT_FILE_H
#define CLT_FILE_H
#include <stddef.h>
#include <stdint.h>

struct clt_writer;
struct clt_spill_write;
int clt_file_open(struct clt_writer *w);     /* exclusive create, never through a symlink; -1: untraced (said) */
void clt_file_start(void);                   /* the compressor thread where it pays (the caller blocks signals) */
void clt_file_exit_begins(const struct clt_writer *w);   /* and from the exit's first full buffer */
const char *clt_file_compressor(void);
void clt_file_say_written(struct clt_writer *w);   /* the trace closed: what was dropped, where it went */       /* where gzip ran beside the writer: "run", "exit", "none" */
/* whole packets p[0, n) into the file, as much as the output buffer takes at a time */
void clt_file_put_whole(struct clt_writer *w, const uint8_t *p, size_t n);
int clt_file_sync(struct clt_writer *w);     /* what the writer holds, in the file; 0: a write stalled (10 s) */
int clt_file_spill_write(struct clt_spill_write *job);   /* spill.c's write, on the spill thread */
int clt_file_stop_compressor(void);          /* 0: its last job did not end within 10 s */
uint64_t clt_file_threads_cpu_ns(void);      /* the helpers' CPU time: cltrace's cost */
void clt_file_stop_spill(void);
void clt_file_forget(void);                  /* a fork child: the parent's threads are not its own */
#endif
