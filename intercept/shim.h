/* What the shim's parts share: configuration, the thread list, the writer. */
#ifndef CLT_SHIM_H
#define CLT_SHIM_H
#include "config.h"
#include "record.h"

extern struct clt_config clt_cfg;
extern struct clt_thread *_Atomic clt_threads;   /* every ring ever attached */

enum clt_thread_state { CLT_TH_FREE, CLT_TH_CLAIMED, CLT_TH_LIVE, CLT_TH_DEAD };

void clt_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void clt_ring_wake(struct clt_thread *th);  /* writer: room was given back */
int clt_is_self(const void *addr);           /* addr lies in libcltrace.so */
void clt_app_library(void *handle);          /* dlsym.c: the OpenCL library the app dlopen'ed */

/* writer.c */
int clt_writer_start(void);                  /* 0 ok, -1: run untraced */
void clt_writer_stop(uint64_t unfinished);   /* drain, finish the file */
unsigned clt_writer_leaks(void);
extern int clt_symbolizer_busy;              /* symbols.c: loading a binary's symbols */             /* after stop: objects the app still held */
void clt_writer_forget(void);                /* in a fork child */
void clt_writer_kick(void);                  /* wake an idle writer */
void clt_writer_flush_now(unsigned timeout_ms); /* drain and write, bounded */

#endif
