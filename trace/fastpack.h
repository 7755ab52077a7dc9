/* Hand encoding of the two packet shapes written once per API call (slice
 * BEGIN with its arguments, slice END). protobuf-c's reflective packing
 * costs ~6,000 instructions per call; these cost ~100s. Every other packet
 * goes through protobuf-c. Field numbers are those of cltrace.proto; the
 * unit test (tests/unit/test_fastpack.c) checks each against protobuf-c's
 * descriptors and decodes these packets with protobuf-c.
 *
 * Nested lengths are written as 2-byte (redundant) varints and patched
 * afterwards, as Perfetto's own protozero does with 4 bytes: one pass, no
 * size precomputation. Packets are bounded well below 16 KiB. */
#ifndef CLT_FASTPACK_H
#define CLT_FASTPACK_H
#include <stdint.h>
#include <string.h>

enum {   /* field numbers, cltrace.proto */
    FP_TRACE_PACKET = 1,                 /* Trace.packet */
    FP_PKT_TIMESTAMP = 8, FP_PKT_TRACK_EVENT = 11, FP_PKT_SEQ_ID = 10, FP_PKT_SEQ_FLAGS = 13,
    FP_TE_TYPE = 9, FP_TE_NAME_IID = 10, FP_TE_DEBUG_ANNOTATIONS = 4,
    FP_TE_FLOW_IDS = 47, FP_TE_TERMINATING_FLOW_IDS = 48, FP_TE_CALLSTACK_IID = 56,
    FP_TE_TRACK_UUID = 11, FP_TE_CATEGORY_IIDS = 3, FP_TE_NAME = 23, FP_TE_CATEGORIES = 22,   /* writer/ownpack.c */
    FP_TE_COUNTER = 30, FP_TE_DOUBLE_COUNTER = 44,
    FP_DA_NAME_IID = 1, FP_DA_BOOL = 2, FP_DA_UINT = 3, FP_DA_INT = 4, FP_DA_POINTER = 7,
    FP_DA_STRING = 6, FP_DA_STRING_IID = 17, FP_DA_ARRAY_VALUES = 12,
    FP_DA_NAME = 10, FP_DA_DOUBLE = 5,                                                          /* writer/ownpack.c */
};
enum { FP_WT_VARINT = 0, FP_WT_FIXED64 = 1, FP_WT_LEN = 2 };
#define FP_MAX_PACKET 16000

enum fp_val { FP_V_UINT, FP_V_INT, FP_V_BOOL, FP_V_PTR, FP_V_STR, FP_V_STR_IID, FP_V_ARRAY };

struct fp_ann {                 /* one argument of a call */
    uint32_t name_iid;
    uint8_t type;               /* enum fp_val */
    uint64_t v;                 /* value, or iid */
    const char *s;              /* FP_V_STR: NUL-terminated */
    const uint64_t *arr;        /* FP_V_ARRAY: unsigned values */
    uint32_t n;
};

static inline uint8_t *fp_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *fp_tag(uint8_t *p, unsigned field, unsigned wt)
{
    return fp_varint(p, (uint64_t)field << 3 | wt);
}

static inline uint8_t *fp_field_varint(uint8_t *p, unsigned field, uint64_t v)
{
    return fp_varint(fp_tag(p, field, FP_WT_VARINT), v);
}

/* A fixed64 field (flow ids, doubles): 8 bytes as they lie in memory. */
static inline uint8_t *fp_fixed64(uint8_t *p, unsigned field, const void *v)
{
    p = fp_tag(p, field, FP_WT_FIXED64);
    memcpy(p, v, 8);                  /* little-endian hosts only (x86-64, aarch64) */
    return p + 8;
}

/* Open a length-delimited field: 2 bytes reserved for its length. */
static inline uint8_t *fp_open(uint8_t *p, unsigned field, uint8_t **len_at)
{
    p = fp_tag(p, field, FP_WT_LEN);
    *len_at = p;
    return p + 2;
}

static inline void fp_close(uint8_t *len_at, uint8_t *end)
{
    size_t n = (size_t)(end - len_at - 2);
    len_at[0] = (uint8_t)(0x80 | (n & 0x7F));
    len_at[1] = (uint8_t)(n >> 7);
}

/* A string or an array: the 2-byte length patched afterwards. */
static inline uint8_t *fp_ann_long(uint8_t *p, const struct fp_ann *a)
{
    uint8_t *len = fp_tag(p, FP_TE_DEBUG_ANNOTATIONS, FP_WT_LEN);
    p = fp_field_varint(len + 2, FP_DA_NAME_IID, a->name_iid);
    if (a->type == FP_V_STR) {
        size_t n = strlen(a->s);
        p = fp_varint(fp_tag(p, FP_DA_STRING, FP_WT_LEN), n);
        memcpy(p, a->s, n);
        p += n;
    } else {
        for (uint32_t i = 0; i < a->n; i++) {
            uint8_t *el;
            p = fp_open(p, FP_DA_ARRAY_VALUES, &el);
            p = fp_field_varint(p, FP_DA_UINT, a->arr[i]);
            fp_close(el, p);
        }
    }
    fp_close(len, p);
    return p;
}

/* One argument. A scalar (most of them) is written inline, its value's
 * tag from a table: it holds at most 17 bytes, so its length is one byte. */
static inline __attribute__((always_inline)) uint8_t *fp_ann(uint8_t *p, const struct fp_ann *a)
{
    if (__builtin_expect(a->type == FP_V_STR || a->type == FP_V_ARRAY, 0))
        return fp_ann_long(p, a);
    /* value tags (varint wire type) of UINT, INT, BOOL, PTR, -, STR_IID; the
     * last is field 17: two bytes */
    static const uint16_t tag[] = { FP_DA_UINT << 3, FP_DA_INT << 3, FP_DA_BOOL << 3, FP_DA_POINTER << 3, 0,
                                    (FP_DA_STRING_IID << 3 & 0x7F) | 0x80 | (FP_DA_STRING_IID >> 4) << 8 };
    uint8_t *len = p + 1;
    p[0] = FP_TE_DEBUG_ANNOTATIONS << 3 | FP_WT_LEN;
    p[2] = FP_DA_NAME_IID << 3;
    p = fp_varint(p + 3, a->name_iid);
    uint16_t t = tag[a->type];
    memcpy(p, &t, 2);                           /* little-endian hosts only (x86-64, aarch64) */
    p += a->type == FP_V_STR_IID ? 2 : 1;
    p = fp_varint(p, a->type == FP_V_BOOL ? a->v != 0 : a->v);   /* INT: two's complement varint */
    *len = (uint8_t)(p - len - 1);
    return p;
}

/* Trace.packet { timestamp, seq, flags=NEEDS, track_event { type, [name_iid,
 * args, callstack_iid, flows] } }. Returns the end of what it wrote (at most FP_MAX_PACKET). */
static inline uint8_t *fp_slice(uint8_t *p, uint64_t ts, uint32_t seq, int begin, uint64_t name_iid,
                                const struct fp_ann *ann, unsigned n_ann,
                                const uint64_t *flows, unsigned n_flows, const uint64_t *term, unsigned n_term,
                                uint64_t callstack_iid)
{
    uint8_t *plen, *elen;
    p = fp_open(p, FP_TRACE_PACKET, &plen);
    p = fp_field_varint(p, FP_PKT_TIMESTAMP, ts);
    p = fp_field_varint(p, FP_PKT_SEQ_ID, seq);
    p = fp_field_varint(p, FP_PKT_SEQ_FLAGS, 2);
    p = fp_open(p, FP_PKT_TRACK_EVENT, &elen);
    p = fp_field_varint(p, FP_TE_TYPE, begin ? 1 : 2);
    if (begin)
        p = fp_field_varint(p, FP_TE_NAME_IID, name_iid);
    for (unsigned i = 0; i < n_ann; i++)
        p = fp_ann(p, &ann[i]);
    if (callstack_iid)
        p = fp_field_varint(p, FP_TE_CALLSTACK_IID, callstack_iid);
    for (unsigned i = 0; i < n_flows; i++)
        p = fp_fixed64(p, FP_TE_FLOW_IDS, &flows[i]);
    for (unsigned i = 0; i < n_term; i++)
        p = fp_fixed64(p, FP_TE_TERMINATING_FLOW_IDS, &term[i]);
    fp_close(elen, p);
    fp_close(plen, p);         /* two bytes, as every nested length here (no move to shrink it) */
    return p;
}

/* The start of a call's slice packet, as fp_slice writes it: the packet
 * and its track_event opened, timestamp, sequence, NEEDS, the event type. */
static inline __attribute__((always_inline)) uint8_t *fp_event_head(uint8_t *p, uint64_t ts, uint32_t seq,
                                                                   uint8_t type, uint8_t **plen, uint8_t **elen)
{
    p = fp_open(p, FP_TRACE_PACKET, plen);
    *p++ = FP_PKT_TIMESTAMP << 3;
    p = fp_varint(p, ts);
    *p++ = FP_PKT_SEQ_ID << 3;
    p = fp_varint(p, seq);
    static const uint8_t mid[6] = { FP_PKT_SEQ_FLAGS << 3, 2,                  /* NEEDS */
                                    FP_PKT_TRACK_EVENT << 3 | FP_WT_LEN, 0, 0,  /* length patched */
                                    FP_TE_TYPE << 3 };
    memcpy(p, mid, sizeof mid);
    *elen = p + 3;
    p[6] = type;
    return p + 7;
}

/* A call's named event (type 1: BEGIN, 3: INSTANT), its arguments encoded
 * already (fp_ann after fp_ann; readable 64 bytes past their end), at most
 * one flow. As a BEGIN, the same bytes as fp_slice(p, ts, seq, 1, name_iid,
 * those arguments, flow != 0 flows, no terminating flows, callstack_iid)
 * (the unit test compares them). */
static inline __attribute__((always_inline)) uint8_t *fp_named(uint8_t *p, uint8_t type, uint64_t ts,
                                                              uint32_t seq, uint64_t name_iid,
                                                              const uint8_t *args, size_t args_len,
                                                              uint64_t flow, uint64_t callstack_iid)
{
    uint8_t *plen, *elen;
    p = fp_event_head(p, ts, seq, type, &plen, &elen);
    *p++ = FP_TE_NAME_IID << 3;
    p = fp_varint(p, name_iid);
    if (args_len <= 64)
        memcpy(p, args, 64);    /* a fixed size: no call (args and p have 64 bytes of slack) */
    else
        memcpy(p, args, args_len);
    p += args_len;
    if (callstack_iid)
        p = fp_field_varint(p, FP_TE_CALLSTACK_IID, callstack_iid);
    if (flow) {
        p = fp_tag(p, FP_TE_FLOW_IDS, FP_WT_FIXED64);
        memcpy(p, &flow, 8);   /* little-endian hosts only (x86-64, aarch64) */
        p += 8;
    }
    fp_close(elen, p);
    fp_close(plen, p);
    return p;
}

static inline __attribute__((always_inline)) uint8_t *fp_begin(uint8_t *p, uint64_t ts, uint32_t seq,
                                                              uint64_t name_iid, const uint8_t *args,
                                                              size_t args_len, uint64_t flow,
                                                              uint64_t callstack_iid)
{
    return fp_named(p, 1, ts, seq, name_iid, args, args_len, flow, callstack_iid);   /* TYPE_SLICE_BEGIN */
}

/* A call whose duration was not measured (CLT_RAW_UNTIMED): the same
 * packet as its BEGIN would be, as a TYPE_INSTANT, and no END. */
static inline __attribute__((always_inline)) uint8_t *fp_instant(uint8_t *p, uint64_t ts, uint32_t seq,
                                                                uint64_t name_iid, const uint8_t *args,
                                                                size_t args_len, uint64_t flow,
                                                                uint64_t callstack_iid)
{
    return fp_named(p, 3, ts, seq, name_iid, args, args_len, flow, callstack_iid);   /* TYPE_INSTANT */
}

/* A slice END, the call's second packet: fp_slice(p, ts, seq, 0, ...)
 * without its loops (the same bytes: the unit test compares them). */
static inline __attribute__((always_inline)) uint8_t *fp_end(uint8_t *p, uint64_t ts, uint32_t seq)
{
    uint8_t *plen, *elen;
    p = fp_event_head(p, ts, seq, 2, &plen, &elen);            /* TYPE_SLICE_END */
    fp_close(elen, p);
    fp_close(plen, p);
    return p;
}

#endif
