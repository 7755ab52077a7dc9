/* Windows: when cltrace records (window.c). What the wrappers read is in
 * put.h (clt_recording, clt_window_tick). */
#ifndef CLT_WINDOW_H
#define CLT_WINDOW_H

void clt_window_load(void);     /* at load: CLTRACE_WINDOW */
void clt_window_begin(void);    /* the writer started: the first window, the control thread, the channel */
void clt_window_refresh(void);  /* clt_active changed */
void clt_window_end(void);      /* at exit: the control thread stopped, the channel removed */
void clt_window_forget(void);   /* in a fork child */
void clt_window_start(void);    /* cltrace_start() */
void clt_window_stop(void);     /* cltrace_stop() */

#endif
