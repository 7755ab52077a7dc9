/* Writing Perfetto packets: each as the trace's field 1 (0x0A, its length as
 * a varint, its bytes), to a raw file or through zlib. */
#include <stdlib.h>
#include <string.h>
#include "pbout.h"

int pb_out_open(struct pb_out *o, const char *path)
{
    size_t n = strlen(path);
    memset(o, 0, sizeof *o);
    if (n > 3 && !strcmp(path + n - 3, ".gz"))
        o->gz = gzopen(path, "wb1");
    else
        o->raw = fopen(path, "wb");
    return o->gz || o->raw ? 0 : -1;
}

int pb_out_close(struct pb_out *o)
{
    int ok = o->gz ? gzclose(o->gz) == Z_OK : o->raw ? fclose(o->raw) == 0 : 0;
    o->gz = NULL;
    o->raw = NULL;
    return ok ? 0 : -1;
}

void pb_out_bytes(struct pb_out *o, const uint8_t *packet, size_t n)
{
    uint8_t hdr[11];
    size_t h = 0;
    hdr[h++] = 0x0A;
    for (uint64_t v = n; ; v >>= 7) {
        hdr[h++] = (uint8_t)(v > 0x7F ? (v & 0x7F) | 0x80 : v);
        if (v <= 0x7F)
            break;
    }
    if (o->gz) {
        gzwrite(o->gz, hdr, (unsigned)h);
        gzwrite(o->gz, packet, (unsigned)n);
    } else if (o->raw) {
        fwrite(hdr, 1, h, o->raw);
        fwrite(packet, 1, n, o->raw);
    }
}

void pb_out_packet(struct pb_out *o, const Perfetto__Protos__TracePacket *p)
{
    size_t n = protobuf_c_message_get_packed_size(&p->base);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return;
    protobuf_c_message_pack(&p->base, buf);
    pb_out_bytes(o, buf, n);
    free(buf);
}
