/* Descriptor tables generated from cl.xml (generated/clt_tables.c): what each
 * command's parameters are, and how to decode enums, bitfields and errors.
 * Read by the writer thread only; the hot path never touches them. */
#ifndef CLT_TABLES_H
#define CLT_TABLES_H
#include <stdint.h>
#include "trace/generated/clt_gen.h"

enum clt_kind {      /* how a parameter is stored in its record slot */
    CLT_K_VAL,       /* unsigned integer */
    CLT_K_SVAL,      /* signed integer, sign-extended */
    CLT_K_HANDLE,    /* cl_* object handle (pointer value) */
    CLT_K_ENUM,      /* value of an enum type: decoder */
    CLT_K_BITFIELD,  /* flags of a bitmask type: decoder */
    CLT_K_BOOL,
    CLT_K_PTR,       /* pointer recorded as an address only */
    CLT_K_STR,       /* const char *: copied (CLT_MAX_STR bytes at most) */
    CLT_K_ARR,       /* const integer array with a known length */
    CLT_K_HARR,      /* const handle array with a known length */
    CLT_K_PROPS,     /* zero-terminated property list */
    CLT_K_OUT_VAL,   /* integer written by the call */
    CLT_K_OUT_HANDLE,/* handle written by the call (cl_event *event, ...) */
    CLT_K_OUT_HARR,  /* handle array written by the call */
    CLT_K_ERRCODE,   /* cl_int *errcode_ret: the value, always known */
    CLT_K_BYTES8,    /* clSetKernelArg value: up to 8 bytes copied */
    CLT_K_FUNC,      /* callback pointer */
    CLT_K_SRCS,      /* clCreateProgramWithSource strings: the source, CLT_MAX_SRC bytes at most */
    CLT_K_WORDS,     /* a small input struct (image_desc...): its first N 8-byte words */
};

/* A host-to-device write: the command whose event has its own price and
 * which a profiling queue slows (capture/calibrate.c measures both; the
 * budget prices it so, capture/sample.c; the writer charges it). */
static inline int clt_fn_is_host_write(unsigned fn)
{
    return fn == CLT_FN_clEnqueueWriteBuffer || fn == CLT_FN_clEnqueueWriteBufferRect ||
           fn == CLT_FN_clEnqueueWriteImage || fn == CLT_FN_clEnqueueWriteHostPipeINTEL;
}

enum clt_ret_kind { CLT_R_VOID, CLT_R_ERR, CLT_R_HANDLE, CLT_R_PTR, CLT_R_VAL };
enum { CLT_F_CORE = 1, CLT_F_CREATES = 2, CLT_F_ENQUEUE = 4 };

struct clt_param {
    const char *name;
    uint8_t kind;           /* enum clt_kind */
    uint16_t dec;           /* enum clt_decoder for ENUM/BITFIELD */
    const char *handle_type;   /* handle kinds: the cl.xml type ("cl_kernel") */
};

struct clt_fn_desc {
    const char *name;
    const struct clt_param *params;
    uint8_t n_params;
    uint8_t ret;            /* enum clt_ret_kind */
    uint8_t flags;          /* CLT_F_* */
    const char *ret_type;   /* CLT_R_HANDLE: the handle type returned ("cl_mem") */
};

struct clt_enum_val { uint64_t value; const char *name; };
struct clt_decoder_desc {
    const char *type;
    const struct clt_enum_val *vals;   /* sorted by value */
    unsigned n;
    int bitfield;
};
struct clt_err { int32_t value; const char *name; };

extern const struct clt_fn_desc clt_fns[CLT_FN_COUNT];
extern const struct clt_decoder_desc clt_decoders[CLT_DEC_COUNT];
extern const struct clt_err clt_errors[];
extern const unsigned clt_n_errors;

const char *clt_error_name(int32_t code);            /* NULL if unknown */
const char *clt_enum_name(unsigned dec, uint64_t v);  /* NULL if unknown */
int clt_enum_index(unsigned dec, uint64_t v);         /* -1 if unknown */
/* Writes "A|B|0x40" into buf; returns buf. */
char *clt_bitfield_str(unsigned dec, uint64_t v, char *buf, unsigned cap);

#endif
