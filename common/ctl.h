/* `cltrace ctl PID ...`: the private channel to a traced program (a Unix
 * socket the shim listens on while windows are in use: capture/window.c).
 *
 * Secured by where it lives and who may connect: a folder of the user's own,
 * mode 0700 ($XDG_RUNTIME_DIR/cltrace, else /tmp/cltrace-UID; a folder that
 * is a link, another user's, or open to others is refused), the socket 0600
 * in it, and the peer's user id checked on every connection (SO_PEERCRED):
 * another user, root included, is refused. */
#ifndef CLT_CTL_H
#define CLT_CTL_H
#include <sys/types.h>

/* The socket's path for pid; make: create the folder (0700) if missing.
 * 0 ok; -1 (err says why). */
int clt_ctl_path(pid_t pid, int make, char *out, unsigned cap, char *err, unsigned errlen);
#endif
