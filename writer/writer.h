/* The writer as the capture side starts and stops it: one thread that
 * drains every ring into the trace file (writer/writer.c). */
#ifndef CLT_WRITER_H
#define CLT_WRITER_H
#include <stdint.h>

int clt_writer_start(void);                  /* 0 ok, -1: run untraced */
/* drain, finish the file; exit_began_ns (CLOCK_MONOTONIC): when the exit
 * began holding the app, load_ns: the shim's constructor (cltrace's cost) */
/* The process ends by `how` ("_exit", "_Exit", "quick_exit"; no atexit
 * handler ran) with `status` (-1: not known): said in the trace. */
void clt_writer_exit_how(const char *how, int status);
struct clt_exit_facts {
    uint64_t unfinished;      /* commands still in flight */
    uint64_t wait_ns;         /* the exiting thread's wait for the collector */
    uint64_t regs_wait_ns;    /* of it: for register counts still compiling (capture/nvbuild.c) */
    uint64_t regs_not_in;     /* programs whose counts had not come when it stopped waiting */
    uint64_t began_ns;        /* CLOCK_MONOTONIC: the app's exit reached cltrace */
    uint64_t load_ns;         /* the shim's constructor */
};
void clt_writer_stop(const struct clt_exit_facts *e);
/* the exit begins: what the scheduler says of every thread, taken now,
 * before the exit's own work (writer/selfcost.c) */
void clt_writer_exit_begins(void);
unsigned clt_writer_leaks(void);             /* after stop: leaks definitely lost or growing (leaks.c) */
void clt_writer_forget(void);                /* in a fork child */
void clt_writer_kick(void);                  /* wake an idle writer */
void clt_writer_cpu_device(void);            /* the app queues work on a CPU device */
/* A thread of cltrace's starts (named, for top -H, perf and gdb) or ends:
 * the exit's account of the scheduler tells it from the app's by its id
 * (writer/selfcost.c). */
void clt_own_thread_begin(const char *name, int idle);   /* idle: it never calls into the driver */
void clt_own_thread_end(void);
int clt_own_thread_is(long tid);                      /* one of cltrace's threads */
int clt_spawn_own(void *(*fn)(void *));               /* a detached one, every signal blocked */
int clt_run_own(void *(*fn)(void *), void *arg);     /* fn on a new one, waited for: 0 */
/* They run at idle priority where they can be put back (ownthreads.c):
 * where the app waits for them, they are, for the rest of the run. */
enum clt_lift { CLT_LIFT_NONE, CLT_LIFT_RING, CLT_LIFT_FLUSH, CLT_LIFT_SNAPSHOT, CLT_LIFT_CLOCK, CLT_LIFT_RELEASE,
                CLT_LIFT_EXIT };
void clt_own_threads_lift(enum clt_lift why);         /* async-signal-safe */
/* around the collector's calls into the driver: threads it starts there
 * inherit idle priority; end puts them at normal (ownthreads.c) */
long clt_own_driver_begin(void);
void clt_own_driver_end(long before);
int clt_own_raise(void);      /* an own idle thread about to take a lock the app may want: normal priority, 1 */
void clt_own_lower(int raised);
/* drain and write: timeout_ms, then up to moving_s more while the writer progresses */
void clt_writer_flush_now(unsigned timeout_ms, unsigned moving_s);
const char *clt_writer_path(void);           /* the trace file ("" before the first call) */
/* With the flight recorder (CLTRACE_RING_MB): what it holds now into a file
 * beside the trace, its path (NULL: not written, or not within timeout_ms;
 * 0: asked, not waited for). Without: the trace flushed, its path. */
const char *clt_writer_snapshot(const char *why, unsigned timeout_ms);
/* whether the last snapshot held every record made before it was asked for
 * (a waited one drains 0.7 s at most: an app that records faster than the
 * writer encodes leaves a backlog) */
int clt_writer_snapshot_whole(void);
/* A control channel is open (capture/window.c): keep what is not yet encoded
 * to what the writer encodes in 0.1 s, so that a snapshot or
 * a flush asked for holds every call before the asking within a second. */
void clt_writer_bound_backlog(void);
extern int clt_symbolizer_busy;              /* loading a binary's symbols: producers wait, not drop */

/* disk.c: a little room set aside beside the trace, given back when the
 * disk fills; the packet that ends the trace then (framed, into buf; 0: no
 * room in buf). */
void clt_disk_watch(int trace_fd, const char *trace_path);     /* the trace starts */
void clt_disk_written(int trace_fd, uint64_t bytes_written);   /* after each write */
void clt_disk_release(void);
size_t clt_disk_full_packet(uint8_t *buf, size_t cap, const char *why, uint64_t kept);
#endif
