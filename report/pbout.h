/* Writing Perfetto packets to a trace file, raw or gzip (merge, annotate). */
#ifndef CLT_REPORT_PBOUT_H
#define CLT_REPORT_PBOUT_H
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>
#include "trace/cltrace.pb-c.h"

struct pb_out { gzFile gz; FILE *raw; };
int pb_out_open(struct pb_out *o, const char *path);      /* gzip where the name ends .gz; 0 ok */
int pb_out_close(struct pb_out *o);                        /* 0: every byte written */
void pb_out_bytes(struct pb_out *o, const uint8_t *packet, size_t n);      /* one packet's encoded bytes */
void pb_out_packet(struct pb_out *o, const Perfetto__Protos__TracePacket *p);

#endif
