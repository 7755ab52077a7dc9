/* cltrace ctl (ctl.c) */
#ifndef CLT_LAUNCHER_CTL_H
#define CLT_LAUNCHER_CTL_H
int clt_ctl_main(int argc, char **argv);   /* argv: cltrace ctl PID COMMAND */
#endif
